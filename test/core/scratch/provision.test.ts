/** Creating and finding a job's file system and mount target, against the emulator (and a fault proxy). */
import { EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import {
  DeleteFileSystemCommand,
  DescribeFileSystemsCommand,
  DescribeMountTargetsCommand,
  EFSClient,
} from '@aws-sdk/client-efs';
import { clientConfig, ec2Client, efsClient } from '../../../core/aws';
import type { Clock } from '../../../core/clock';
import { ensureMountTarget, waitForMountTarget } from '../../../core/scratch/mount-target';
import { ensureFileSystem, waitForFileSystem } from '../../../core/scratch/provision';
import { ScratchInterrupted, ScratchInUseError, ScratchSetupError } from '../../../core/scratch/setup-errors';
import { TAG_OWNER_INSTANCE } from '../../../core/tags';
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
  const proxiedEc2 = () => new EC2Client({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint });
  const spec = (az: string, owner = 'i-0aaaaaaaaaaaaaaaa') => ({
    fleetId: 'f1',
    jobId: 'job-1',
    ownerInstanceId: owner,
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

  it('creates once; a second attempt with the same job finds it and takes ownership', async () => {
    const az = net.subnets[0].availabilityZone;
    const first = await ensureFileSystem(efs(), ec2(), spec(az));
    expect(first.reused).toBe(false);

    const second = await ensureFileSystem(efs(), ec2(), spec(az, 'i-0bbbbbbbbbbbbbbbb'));
    expect(second).toMatchObject({
      reused: true,
      fileSystem: { FileSystemId: first.fileSystem.FileSystemId },
    });
    const [fs, ...more] = (await efs().send(new DescribeFileSystemsCommand({}))).FileSystems!;
    expect(more).toEqual([]);
    expect(fs.Tags).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: 'i-0bbbbbbbbbbbbbbbb' });
  });

  it('still reuses the file system when IAM does not allow moving the owner tag, and says what that means', async () => {
    const az = net.subnets[0].availabilityZone;
    const first = await ensureFileSystem(efs(), ec2(), spec(az));
    proxy.addRule({
      service: 'efs',
      operation: 'TagResource',
      fault: { kind: 'error', status: 403, code: 'AccessDeniedException', message: 'not authorized' },
    });
    const progress: string[] = [];
    const second = await ensureFileSystem(proxied(), proxiedEc2(), spec(az, 'i-0bbbbbbbbbbbbbbbb'), {
      onProgress: (m) => progress.push(m),
    });
    expect(second).toMatchObject({
      reused: true,
      fileSystem: { FileSystemId: first.fileSystem.FileSystemId },
    });
    expect(progress).toEqual([
      expect.stringMatching(/cannot move mountfleet:owner-instance .* \(access denied\)/),
    ]);
  });

  it("refuses to reuse the job's file system from another zone, or one not made by mountfleet", async () => {
    await createScratchFileSystem(efs(), { fleet: 'f1', mountTargetSubnet: net.subnets[1] }, 'mf/f1/job-1');
    await expect(ensureFileSystem(efs(), ec2(), spec(net.subnets[0].availabilityZone))).rejects.toThrow(
      /already has file system fs-\w+ in us-east-1b, but this instance is in us-east-1a: run `mountfleet scratch delete/,
    );
    await createScratchFileSystem(efs(), {}, 'mf/f1/job-2');
    await expect(
      ensureFileSystem(efs(), ec2(), { ...spec(net.subnets[0].availabilityZone), jobId: 'job-2' }),
    ).rejects.toThrow(/is not tagged mountfleet:fleet=f1: it was not made by mountfleet/);
  });

  it('waits for a previous file system of the job to finish deleting, then creates a fresh one', async () => {
    const old = await createScratchFileSystem(efs(), { fleet: 'f1' }, 'mf/f1/job-1');
    reportFileSystemsAs('deleting');
    // The deletion finishes while we wait.
    const clock = fastClock(async () => {
      await efs()
        .send(new DeleteFileSystemCommand({ FileSystemId: old }))
        .catch(() => undefined); // already deleted on an earlier sleep
    });
    const ensured = await ensureFileSystem(proxied(), proxiedEc2(), spec('us-east-1a'), { clock });
    expect(ensured.reused).toBe(false);
    expect(ensured.fileSystem.FileSystemId).not.toBe(old);
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
      new ScratchSetupError(
        `file system ${id} to become available is still creating after 30 s (limit 30 s)`,
      ),
    );
    expect(progress[0]).toBe(`waiting for file system ${id} to become available (creating, 0 s)`);

    const stop = new AbortController();
    const clock = fastClock(async () => stop.abort());
    await expect(waitForFileSystem(proxied(), id, { clock, signal: stop.signal })).rejects.toThrow(
      ScratchInterrupted,
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

  describe('a file system another run of the job may be using', () => {
    let owner: string;
    let id: string;
    beforeEach(async () => {
      const launched = await ec2().send(
        new RunInstancesCommand({
          ImageId: 'ami-12c6146b',
          MinCount: 1,
          MaxCount: 1,
          SubnetId: net.subnets[0].subnetId,
        }),
      );
      owner = launched.Instances![0].InstanceId!;
      id = await createScratchFileSystem(
        efs(),
        { fleet: 'f1', owner, job: 'job-1', mountTargetSubnet: net.subnets[0] },
        'mf/f1/job-1',
      );
    });
    const ownerTag = async () =>
      (await efs().send(new DescribeFileSystemsCommand({ FileSystemId: id }))).FileSystems![0].Tags;

    it('is refused while its owner runs, and left as it was', async () => {
      await expect(ensureFileSystem(efs(), ec2(), spec('us-east-1a', 'i-0bbbbbbbbbbbbbbbb'))).rejects.toThrow(
        new ScratchInUseError(
          `job job-1's file system ${id} belongs to instance ${owner} (running), which may be running the job: ` +
            `wait for that run to end, or use another --job; if no run of job job-1 is left on ${owner}, run \`mountfleet scratch delete ${id}\` first`,
        ),
      );
      expect(await ownerTag()).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: owner });
    });

    it('is refused while its running owner has not made the mount target yet', async () => {
      // The owner's run is between CreateFileSystem and CreateMountTarget: no mount target is no evidence
      // that nobody uses the file system.
      const fresh = await createScratchFileSystem(efs(), { fleet: 'f1', owner, job: 'job-2' }, 'mf/f1/job-2');
      await expect(
        ensureFileSystem(efs(), ec2(), { ...spec('us-east-1a', 'i-0bbbbbbbbbbbbbbbb'), jobId: 'job-2' }),
      ).rejects.toThrow(ScratchInUseError);
      expect(
        (await efs().send(new DescribeFileSystemsCommand({ FileSystemId: fresh }))).FileSystems![0].Tags,
      ).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: owner });
    });

    it('is adopted by exactly one of two instances that find its owner gone at the same moment', async () => {
      await ec2().send(new TerminateInstancesCommand({ InstanceIds: [owner] }));
      const adopters = ['i-0bbbbbbbbbbbbbbbb', 'i-0cccccccccccccccc'];
      const outcomes = await Promise.allSettled(
        adopters.map((instance) => ensureFileSystem(efs(), ec2(), spec('us-east-1a', instance))),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as Error] : []));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toBeInstanceOf(ScratchInUseError);
      const winner = adopters[outcomes.findIndex((o) => o.status === 'fulfilled')];
      expect(await ownerTag()).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: winner });
      // The loser notices either before its own write (the winner's tag is already there) or after it.
      expect(lost[0].message).toMatch(
        new RegExp(`(was just taken over|was adopted at the same time) by instance ${winner}`),
      );
    });

    it('is refused when the owner cannot be looked up', async () => {
      proxy.addRule({ service: 'ec2', operation: 'DescribeInstances', fault: { kind: '5xx', status: 503 } });
      await expect(
        ensureFileSystem(efs(), proxiedEc2(), spec('us-east-1a', 'i-0bbbbbbbbbbbbbbbb')),
      ).rejects.toThrow(
        new RegExp(`cannot tell whether ${owner}, the owner of job job-1's file system ${id}`),
      );
      expect(await ownerTag()).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: owner });
    });

    it('is reused, and its owner moved, once the owner is terminated', async () => {
      await ec2().send(new TerminateInstancesCommand({ InstanceIds: [owner] }));
      const ensured = await ensureFileSystem(efs(), ec2(), spec('us-east-1a', 'i-0bbbbbbbbbbbbbbbb'));
      expect(ensured).toMatchObject({ reused: true, fileSystem: { FileSystemId: id } });
      expect(await ownerTag()).toContainEqual({ Key: TAG_OWNER_INSTANCE, Value: 'i-0bbbbbbbbbbbbbbbb' });
    });
  });
});
