/**
 * The agent killed outright (SIGKILL: no teardown runs) in each phase of `scratch run`, together with its
 * instance: whatever it left in the emulator is tagged, and one reaper run past the grace period
 * (`mountfleet reap`, the same code the scheduled Lambda runs) deletes all of it. Needs the built bundle.
 */
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { ec2Client } from '../../../../core/aws/clients';
import { runCli } from '../../../support/cli';
import {
  FLEET,
  fileSystemsOf,
  holdIn,
  job,
  leftovers,
  mountsUnder,
  NOTHING_LEFT,
  signalWhenHeld,
  sleep,
  useScratchRuns,
  type PhaseHold,
} from './harness';

jest.setTimeout(60_000);

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return check();
}

describe('SIGKILL of the agent in each phase, then one reaper run', () => {
  const scratch = useScratchRuns(1);

  it('leaves only tagged file systems, which the reaper deletes with their mount targets', async () => {
    const phases: PhaseHold[] = [
      holdIn('creating', 'kill-creating', 1),
      holdIn('waiting', 'kill-waiting', 1),
      holdIn('mount-target', 'kill-mount-target', 1),
      holdIn('mounting', 'kill-mounting', 1),
      { spec: { job: 'kill-running', command: job('echo started; exec sleep 30') }, when: /^started$/m },
      holdIn('tearing-down', 'kill-teardown', 1),
    ];

    const killed = await Promise.all(
      phases.map(async (hold) => ({
        job: hold.spec.job,
        run: await signalWhenHeld(scratch, hold, 'SIGKILL', 200),
      })),
    );

    // Requests already on their way still land (the proxy forwards them after their delay), and the
    // helper started before the kill still mounts: wait for that, then check every job left a file system.
    const mounting = killed.find((k) => k.job === 'kill-mounting')!.run;
    expect(await eventually(() => mountsUnder(mounting.dir).length === 1)).toBe(true);
    for (const { job: id } of killed) {
      expect({ job: id, left: await eventually(async () => (await fileSystemsOf(id)).length === 1) }).toEqual(
        {
          job: id,
          left: true,
        },
      );
    }
    const leaked = (await fileSystemsOf()).map((fs) => fs.FileSystemId!).sort();
    expect(leaked).toHaveLength(phases.length);

    // The instance goes away with its agent (its jobs and mounts with it).
    await scratch.cleanUp();
    await ec2Client({ maxAttempts: 1 }).send(
      new TerminateInstancesCommand({ InstanceIds: [scratch.instance.instanceId] }),
    );

    const reap = await runCli(['reap', '--fleet', FLEET, '--grace-minutes', '0', '--json'], {
      env: { AWS_ENDPOINT_URL: scratch.emulator },
    });
    expect({ code: reap.code, stderr: reap.code === 0 ? '' : reap.stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(reap.stdout) as { deleted: string[]; failed: unknown[] };
    expect([...report.deleted].sort()).toEqual(leaked);
    expect(report.failed).toEqual([]);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });
});
