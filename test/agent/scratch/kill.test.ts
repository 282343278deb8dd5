/**
 * The agent killed outright (SIGKILL: no teardown runs) in each phase of `scratch run`, together with its
 * instance: whatever it left in the emulator is tagged, and one reaper run past the grace period
 * (`mountfleet reap`, the same code the scheduled Lambda runs) deletes all of it. Needs the built bundle.
 */
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { ec2Client } from '../../../core/aws';
import { runCli } from '../../support/cli';
import { useEmulator } from '../../support/emulator';
import type { TestNetwork } from '../../support/fixtures';
import {
  cleanUpRun,
  createNetwork,
  FLEET,
  fileSystemsOf,
  launchInstance,
  leftovers,
  mountsUnder,
  NOTHING_LEFT,
  startRun,
  type RunSpec,
  type ScratchRun,
  type TestInstance,
} from './harness';

jest.setTimeout(60_000);

const job = (body: string) => ['sh', '-c', `echo $$ > "$TEST_DIR/job.pid"; ${body}`];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return check();
}

describe('SIGKILL of the agent in each phase, then one reaper run', () => {
  const emu = useEmulator();
  let net: TestNetwork;
  let instance: TestInstance;
  const runs: ScratchRun[] = [];

  beforeEach(async () => {
    net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    instance = await launchInstance(net);
  });
  afterEach(async () => {
    await Promise.all(runs.splice(0).map(cleanUpRun));
    await instance.imds.stop();
  });

  it('leaves only tagged file systems, which the reaper deletes with their mount targets', async () => {
    const available = /("LifeCycleState"\s*:\s*)"available"/g;
    const phases: Array<{ spec: Omit<RunSpec, 'net' | 'instance' | 'emulator'>; when: RegExp }> = [
      {
        spec: {
          job: 'kill-creating',
          command: job('true'),
          faults: (p) =>
            p.addRule({ service: 'efs', operation: 'CreateFileSystem', fault: { kind: 'delay', ms: 1000 } }),
        },
        when: /\[creating\]/,
      },
      {
        spec: {
          job: 'kill-waiting',
          command: job('true'),
          faults: (p) => {
            for (const operation of ['CreateFileSystem', 'DescribeFileSystems']) {
              p.addRule({
                service: 'efs',
                operation,
                fault: { kind: 'rewrite', rewrite: (body) => body.replace(available, '$1"creating"') },
              });
            }
          },
        },
        when: /waiting for file system/,
      },
      {
        spec: {
          job: 'kill-mount-target',
          command: job('true'),
          faults: (p) =>
            p.addRule({
              service: 'efs',
              operation: 'DescribeMountTargets',
              match: (r) => r.query.has('MountTargetId'),
              fault: { kind: 'rewrite', rewrite: (body) => body.replace(available, '$1"creating"') },
            }),
        },
        when: /waiting for mount target/,
      },
      {
        spec: {
          job: 'kill-mounting',
          command: job('true'),
          env: { MOUNTFLEET_STANDIN_MOUNT_DELAY_SECONDS: '1' },
        },
        when: /\[mounting\]/,
      },
      { spec: { job: 'kill-running', command: job('echo started; exec sleep 30') }, when: /^started$/m },
      {
        spec: {
          job: 'kill-teardown',
          command: job('true'),
          faults: (p) =>
            p.addRule({ service: 'efs', operation: 'DeleteMountTarget', fault: { kind: 'delay', ms: 1000 } }),
        },
        when: /\[tearing-down\]/,
      },
    ];

    const killed = await Promise.all(
      phases.map(async ({ spec, when }) => {
        const run = await startRun({ net, instance, emulator: emu.endpoint, ...spec });
        runs.push(run);
        await run.waitFor(when);
        await sleep(200);
        run.child.kill('SIGKILL');
        await run.exited;
        return { job: spec.job, run };
      }),
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
    await Promise.all(runs.splice(0).map(cleanUpRun));
    await ec2Client({ maxAttempts: 1 }).send(
      new TerminateInstancesCommand({ InstanceIds: [instance.instanceId] }),
    );

    const reap = await runCli(['reap', '--fleet', FLEET, '--grace-minutes', '0', '--json'], {
      env: { AWS_ENDPOINT_URL: emu.endpoint },
    });
    expect({ code: reap.code, stderr: reap.code === 0 ? '' : reap.stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(reap.stdout) as { deleted: string[]; failed: unknown[] };
    expect([...report.deleted].sort()).toEqual(leaked);
    expect(report.failed).toEqual([]);
    expect(await leftovers(net)).toEqual(NOTHING_LEFT);
  });
});
