/**
 * The IMDS watcher shared by `scratch run` and `mountfleet up`, against the IMDS stand-in; and a scratch run
 * (emulator, stand-in EFS mount helper) that Auto Scaling terminates mid-job.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeFileSystemsCommand } from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../../../core/aws/clients';
import { systemClock } from '../../../core/common/clock';
import { metadataService, type InstanceMetadataClient } from '../../../core/instance/imds';
import { runScratchJob } from '../../../core/scratch/lifecycle';
import { terminationNoticeReader, watchForTermination } from '../../../core/instance/termination-notice';
import { MOUNT_HELPER_STANDIN } from '../../agent/commands/scratch/harness';
import { useEmulator } from '../../support/emulator';
import { createNetwork } from '../../support/fixtures';
import { ImdsStandIn } from '../../support/imds';

let imds: ImdsStandIn;
let client: InstanceMetadataClient;
beforeEach(async () => {
  imds = await ImdsStandIn.start();
  client = metadataService({ endpoint: imds.endpoint });
});
afterEach(async () => {
  client.close();
  await imds.stop();
});

describe('watchForTermination', () => {
  const watch = (signal: AbortSignal, log: string[] = []) =>
    watchForTermination(terminationNoticeReader(client), {
      clock: systemClock,
      pollMs: 50,
      signal,
      log: (line) => log.push(line),
    });

  it('ignores 404 and InService, and reports Terminated as an Auto Scaling termination', async () => {
    const watching = watch(new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
    imds.setTargetLifecycleState('InService');
    await new Promise((resolve) => setTimeout(resolve, 200));
    imds.setTargetLifecycleState('Terminated');
    expect(await watching).toEqual({ source: 'auto-scaling', action: 'terminate' });
    const statuses = imds.requests().filter((r) => r.path.endsWith('target-lifecycle-state'));
    expect(statuses.some((r) => r.status === 404)).toBe(true);
  });

  it('reports a Spot notice first when both are up', async () => {
    imds.setTargetLifecycleState('Terminated');
    imds.scheduleSpotInterruption({ action: 'terminate', time: '2026-11-22T15:30:00Z' });
    expect(await watch(new AbortController().signal)).toEqual({
      source: 'spot',
      action: 'terminate',
      time: new Date('2026-11-22T15:30:00Z'),
    });
  });

  it('keeps polling through IMDS failures, says so once, and ends undefined when stopped', async () => {
    const log: string[] = [];
    const stop = new AbortController();
    await imds.stop();
    const watching = watch(stop.signal, log);
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort();
    expect(await watching).toBeUndefined();
    expect(log).toEqual([
      expect.stringMatching(/^cannot read termination notices from IMDS \(will keep trying\)/),
    ]);
  });
});

describe('scratch run when Auto Scaling terminates the instance', () => {
  useEmulator();
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mf-terminate-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stops the job with SIGTERM and deletes its file system', async () => {
    const net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    const log: string[] = [];
    const running = runScratchJob({
      efs: efsClient({ maxAttempts: 1 }),
      placement: {
        instanceId: imds.values.instanceId,
        availabilityZone: net.subnets[0].availabilityZone,
        availabilityZoneId: net.subnets[0].availabilityZoneId,
      },
      fleetId: 'f1',
      jobId: 'scale-in',
      path: join(dir, 'scratch'),
      subnetId: net.subnets[0].subnetId,
      securityGroupId: net.securityGroupId,
      teardownGraceSeconds: 5,
      command: 'sleep',
      args: ['30'],
      mountHelper: MOUNT_HELPER_STANDIN,
      readTerminationNotice: terminationNoticeReader(client),
      terminationPollMs: 100,
      log: (line) => {
        log.push(line);
        if (line.startsWith('[running]')) imds.setTargetLifecycleState('Terminated');
      },
    });
    const result = await running;
    expect(result).toMatchObject({
      stoppedBy: 'auto-scaling',
      exitStatus: 143,
      job: { status: 143, signal: 'SIGTERM' },
      teardown: { status: 'deleted' },
    });
    expect(log).toContain(
      'Auto Scaling is terminating this instance (target-lifecycle-state Terminated); stopping the job',
    );
    const left = await efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({}));
    expect(left.FileSystems).toEqual([]);
  });
});
