/**
 * What a running Batch job sees when its mount fails, and how soon the host's agent ends it (needs root: private
 * mount and PID namespaces, a cgroup of its own; the real Mountpoint, the harness or MOUNTFLEET_MOUNT_S3):
 *
 *   npx tsx bench/container-guard.ts [--runs 3]
 *
 * Each run is test/agent/commands/up/guard-scenario.ts against a fresh moto: an agent with agent.json
 * `containers`, job containers bound as Docker binds them in a task cgroup, then `kill -9` of a Mountpoint process
 * and the zone's Express cache black-holed (probes every 1 s, 0.8 s deadline). Prints, per run and event, the
 * milliseconds from the fault to: the ready file gone, the agent ending the container, the container's exit, the
 * ready file back. docs/batch.md ("What a running job sees") quotes these figures.
 */
import { parseArgs } from 'node:util';
import { MotoServer } from '../test/support/moto';
import { realMountpoint } from '../test/support/real-mountpoint';
import { runGuard } from '../test/agent/commands/up/guard-harness';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  const mountpoint = realMountpoint();
  if (!('binary' in mountpoint)) throw new Error(mountpoint.skip);
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'testing';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'testing';
  const moto = await MotoServer.start();
  const rows = ['run\tevent\treadyGoneMs\tendedByAgentMs\tcontainerExitMs\treadyBackMs'];
  try {
    for (let run = 1; run <= Number(values.runs); run++) {
      await moto.reset();
      const r = await runGuard(moto.endpoint, mountpoint.binary, 30_000);
      if (r.error) throw new Error(`run ${run}: ${r.error}`);
      for (const [event, e] of [
        ['kill -9', r.restart],
        ['Express zone dark', r.zone],
      ] as const) {
        rows.push(
          [run, event, e?.readyGoneMs, e?.guardMs, e?.endedMs, e?.readyBackMs].map(String).join('\t'),
        );
      }
      process.stderr.write(`run ${run} done\n`);
    }
  } finally {
    await moto.stop();
  }
  process.stdout.write(
    `npx tsx bench/container-guard.ts --runs ${values.runs} (${mountpoint.kind} Mountpoint)\n`,
  );
  process.stdout.write(`${rows.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
});
