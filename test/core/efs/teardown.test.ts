import { DescribeFileSystemsCommand, DescribeMountTargetsCommand } from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../../../core/aws/clients';
import type { Clock } from '../../../core/common/clock';
import { markTeardownStarted, teardownFileSystem } from '../../../core/efs/teardown';
import { TAG_TEARDOWN_STARTED_AT } from '../../../core/contract/tags';
import { useEmulator } from '../../support/emulator';
import { createNetwork, createScratchFileSystem } from '../../support/fixtures';

describe('teardownFileSystem (emulator)', () => {
  useEmulator();
  const efs = () => efsClient({ maxAttempts: 1 });

  it('deletes the mount target, waits until none remain, then deletes the file system', async () => {
    const net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    const id = await createScratchFileSystem(
      efs(),
      { fleet: 'f1', mountTargetSubnet: net.subnets[0] },
      'tok-1',
    );
    expect(
      (await efs().send(new DescribeMountTargetsCommand({ FileSystemId: id }))).MountTargets,
    ).toHaveLength(1);

    const outcome = await teardownFileSystem(efs(), id, { initialPollMs: 10 });

    expect(outcome).toEqual({ status: 'deleted', mountTargetsDeleted: 1 });
    const left = (await efs().send(new DescribeFileSystemsCommand({}))).FileSystems ?? [];
    expect(left.map((f) => f.FileSystemId)).not.toContain(id);
  });

  it('is idempotent: a second call on a deleted file system reports already-gone', async () => {
    const id = await createScratchFileSystem(efs(), { fleet: 'f1' }, 'tok-2');
    expect((await teardownFileSystem(efs(), id)).status).toBe('deleted');
    expect(await teardownFileSystem(efs(), id)).toEqual({ status: 'already-gone', mountTargetsDeleted: 0 });
  });

  it('gives up waiting at the deadline and reports pending, leaving the rest to the next run', async () => {
    // A mount target that never goes away: the stand-in clock jumps past the deadline on the first sleep,
    // and the client's DeleteMountTarget is swallowed so the target stays (as a slow real deletion would).
    const net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    const client = efs();
    const id = await createScratchFileSystem(
      client,
      { fleet: 'f1', mountTargetSubnet: net.subnets[0] },
      'tok-3',
    );
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteMountTargetCommand')
          return { output: { $metadata: {} }, response: {} };
        return next(args);
      },
      { step: 'initialize', name: 'slowMountTargetDeletion' },
    );
    let t = 0;
    const clock: Clock = { now: () => t, sleep: async (ms) => void (t += ms) };

    const outcome = await teardownFileSystem(client, id, { clock, maxWaitMs: 5000, initialPollMs: 1000 });

    expect(outcome).toMatchObject({ status: 'pending', cause: 'mount-targets' });
    expect((await efs().send(new DescribeFileSystemsCommand({ FileSystemId: id }))).FileSystems).toHaveLength(
      1,
    );
  });

  it('marks the start of a teardown for the reaper; a file system already gone is no failure', async () => {
    const id = await createScratchFileSystem(efs(), { fleet: 'f1' }, 'tok-4');
    const at = Date.parse('2026-11-24T08:00:00Z');

    expect(await markTeardownStarted(efs(), id, at)).toBeUndefined();

    const [described] = (await efs().send(new DescribeFileSystemsCommand({ FileSystemId: id }))).FileSystems!;
    expect(described.Tags).toContainEqual({
      Key: TAG_TEARDOWN_STARTED_AT,
      Value: '2026-11-24T08:00:00.000Z',
    });
    expect(await teardownFileSystem(efs(), id)).toMatchObject({ status: 'deleted' });
    expect(await markTeardownStarted(efs(), id, at)).toBeUndefined();
  });
});
