/** Creating a run's file system and mount target, against the emulator (and a fault proxy). */
import { DescribeFileSystemsCommand, DescribeMountTargetsCommand, EFSClient } from '@aws-sdk/client-efs';
import { clientConfig, ec2Client, efsClient } from '../../../core/aws/clients';
import type { Clock } from '../../../core/common/clock';
import { ensureMountTarget, waitForMountTarget } from '../../../core/efs/mount-target';
import { creationToken } from '../../../core/contract/creation-token';
import { createFileSystem, waitForFileSystem } from '../../../core/efs/run-create';
import { RunInterrupted, RunSetupError } from '../../../core/efs/setup-errors';
import { TAG_JOB, TAG_OWNER_INSTANCE, TAG_RUN } from '../../../core/contract/tags';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import { createNetwork, createScratchFileSystem, type TestNetwork } from '../../support/fixtures';

const available = /("LifeCycleState"\s*:\s*)"available"/g;

describe('scratch provisioning (emulator)', () => {
  const emu = useEmulator();
  let proxy: FaultProxy;
  let net: TestNetwork;
  const efs = () => efsClient({ maxAttempts: 1 });
  /** A client that goes through the fault proxy. */
  const proxied = () => new EFSClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint });
  const ec2 = () => ec2Client({ maxAttempts: 1 });
  const RUN = 'r20261126t000000-00000000000000aa';
  const spec = (az: string) => ({
    fleetId: 'f1',
    jobId: 'job-1',
    runId: RUN,
    ownerInstanceId: 'i-0aaaaaaaaaaaaaaaa',
    availabilityZoneName: az,
  });
  /** Makes DescribeFileSystems through the proxy report every available file system as `state`. */
  const reportFileSystemsAs = (state: string) =>
    proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      fault: { kind: 'rewrite', rewrite: (body) => body.replace(available, `$1"${state}"`) },
    });
  /** A clock whose sleeps pass at once (and can do something meanwhile). */
  const fastClock = (onSleep: () => Promise<void> = async () => undefined): Clock => {
    let t = 0;
    return { now: () => t, sleep: async (ms) => void ((t += ms), await onSleep()) };
  };

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  afterAll(() => proxy.stop());
  beforeEach(async () => {
    proxy.clear();
    proxy.resetStats();
    net = await createNetwork(ec2(), 2);
  });

  it("creates the run's file system with the run's token and tags", async () => {
    const fs = await createFileSystem(efs(), spec(net.subnets[0].availabilityZone));
    expect(fs).toMatchObject({ CreationToken: creationToken('f1', RUN), AvailabilityZoneName: 'us-east-1a' });
    expect(fs.Tags).toEqual(
      expect.arrayContaining([
        { Key: TAG_JOB, Value: 'job-1' },
        { Key: TAG_RUN, Value: RUN },
        { Key: TAG_OWNER_INSTANCE, Value: 'i-0aaaaaaaaaaaaaaaa' },
      ]),
    );
  });

  it('finds its own earlier attempt after a lost answer (409 on its own token), and nothing else', async () => {
    const az = net.subnets[0].availabilityZone;
    const first = await createFileSystem(efs(), spec(az));
    const retried = await createFileSystem(efs(), spec(az));
    expect(retried.FileSystemId).toBe(first.FileSystemId);
    expect((await efs().send(new DescribeFileSystemsCommand({}))).FileSystems).toHaveLength(1);
  });

  it('refuses a file system that holds its token without its tags (never adopts one)', async () => {
    const other = await createScratchFileSystem(
      efs(),
      { fleet: 'f1', job: 'job-1' },
      creationToken('f1', RUN),
    );
    await expect(createFileSystem(efs(), spec('us-east-1a'))).rejects.toThrow(
      new RegExp(`CreationToken mf/f1/${RUN} of this run is taken by ${other} that this run cannot use`),
    );
  });

  it('makes a file system of its own next to an earlier run of the same job, whoever owns that one', async () => {
    // What today's job-keyed token would have found and adopted: an orphan of job-1.
    const orphan = await createScratchFileSystem(
      efs(),
      { fleet: 'f1', job: 'job-1', owner: 'i-0bbbbbbbbbbbbbbbb', mountTargetSubnet: net.subnets[0] },
      'mf/f1/job-1',
    );
    const [a, b] = await Promise.all(
      ['r20261126t000000-0000000000000001', 'r20261126t000000-0000000000000002'].map((runId) =>
        createFileSystem(proxied(), { ...spec('us-east-1a'), runId }),
      ),
    );
    expect(new Set([a.FileSystemId, b.FileSystemId, orphan]).size).toBe(3);
    const orphanNow = (await efs().send(new DescribeFileSystemsCommand({ FileSystemId: orphan })))
      .FileSystems![0];
    expect(orphanNow.Tags).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: 'i-0bbbbbbbbbbbbbbbb' });
    // Nothing but the two creates: no look-up of the job, no owner tag moved.
    expect(proxy.count('efs', 'CreateFileSystem')).toBe(2);
    expect(proxy.count('efs', 'DescribeFileSystems') + proxy.count('efs', 'TagResource')).toBe(0);
  });

  it('bounds the wait for `available`, and stops it when interrupted', async () => {
    const id = await createScratchFileSystem(efs(), { fleet: 'f1' }, 'tok');
    reportFileSystemsAs('creating');
    const progress: string[] = [];
    await expect(
      waitForFileSystem(proxied(), id, {
        clock: fastClock(),
        timeoutMs: 30_000,
        onProgress: (m) => progress.push(m),
      }),
    ).rejects.toThrow(
      new RunSetupError(`file system ${id} to become available is still creating after 30 s (limit 30 s)`),
    );
    expect(progress[0]).toBe(`waiting for file system ${id} to become available (creating, 0 s)`);

    const stop = new AbortController();
    const clock = fastClock(async () => stop.abort());
    await expect(waitForFileSystem(proxied(), id, { clock, signal: stop.signal })).rejects.toThrow(
      RunInterrupted,
    );
  });

  it('creates the mount target in the given subnet, reuses it, and recovers from a conflicting retry', async () => {
    const id = await createScratchFileSystem(efs(), { fleet: 'f1' }, 'tok');
    const target = { subnetId: net.subnets[0].subnetId, securityGroupId: net.securityGroupId };
    const created = await ensureMountTarget(efs(), id, target);
    expect(created).toMatchObject({ reused: false, mountTarget: { SubnetId: target.subnetId } });
    const ready = await waitForMountTarget(efs(), created.mountTarget);
    expect(ready.IpAddress).toMatch(/^10\.0\.0\.\d+$/);

    expect(await ensureMountTarget(efs(), id, target)).toMatchObject({
      reused: true,
      mountTarget: { MountTargetId: created.mountTarget.MountTargetId },
    });

    // A listing that missed it (as after a lost answer): the create conflicts, the next round finds it.
    proxy.addRule({
      service: 'efs',
      operation: 'DescribeMountTargets',
      times: 1,
      fault: {
        kind: 'rewrite',
        rewrite: (body) => JSON.stringify({ ...JSON.parse(body), MountTargets: [] }),
      },
    });
    expect(await ensureMountTarget(proxied(), id, target)).toMatchObject({
      reused: true,
      mountTarget: { MountTargetId: created.mountTarget.MountTargetId },
    });
    expect(proxy.count('efs', 'CreateMountTarget')).toBe(1);
    expect(
      (await efs().send(new DescribeMountTargetsCommand({ FileSystemId: id }))).MountTargets,
    ).toHaveLength(1);
  });
});
