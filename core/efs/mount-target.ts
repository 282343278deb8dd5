/**
 * The run's mount target: created in the fleet's subnet with the scratch security group (or, after a retried
 * create whose answer was lost, the one that attempt made: a One Zone file system has exactly one), then
 * waited for until it has its IP.
 */
import {
  CreateMountTargetCommand,
  DescribeMountTargetsCommand,
  type EFSClient,
  type MountTargetDescription,
} from '@aws-sdk/client-efs';
import { listMountTargets } from './teardown';
import { errorName, undefinedIfNotFound } from '../common';
import { checkInterrupted, RunSetupError } from './setup-errors';
import { waitFor, type WaitOptions } from './wait';

interface MountTargetSpec {
  readonly subnetId: string;
  readonly securityGroupId: string;
}

async function mountTargetsOf(
  efs: EFSClient,
  fileSystemId: string,
  abortSignal?: AbortSignal,
): Promise<MountTargetDescription[]> {
  const targets = await listMountTargets(efs, fileSystemId, abortSignal);
  if (targets === 'gone') throw new RunSetupError(`file system ${fileSystemId} disappeared`);
  return targets;
}

/**
 * Creates the file system's mount target in the fleet's subnet with the scratch security group, or finds the
 * one an earlier attempt of this run made (a One Zone file system has exactly one).
 */
export async function ensureMountTarget(
  efs: EFSClient,
  fileSystemId: string,
  spec: MountTargetSpec,
  options: WaitOptions = {},
): Promise<{ readonly mountTarget: MountTargetDescription; readonly reused: boolean }> {
  for (let round = 0; round < 3; round++) {
    checkInterrupted(options.signal);
    const existing = (await mountTargetsOf(efs, fileSystemId, options.signal))[0];
    if (existing?.LifeCycleState === 'deleting') {
      await waitFor(
        `mount target ${existing.MountTargetId} of ${fileSystemId} to finish deleting`,
        async () => {
          const mt = (await mountTargetsOf(efs, fileSystemId, options.signal)).find(
            (m) => m.MountTargetId === existing.MountTargetId,
          );
          return mt === undefined ? { value: undefined } : { state: mt.LifeCycleState ?? 'unknown' };
        },
        options,
        { timeoutMs: 300_000, initialPollMs: 1000, maxPollMs: 10_000 },
      );
      continue;
    }
    if (existing !== undefined) return { mountTarget: existing, reused: true };
    checkInterrupted(options.signal);
    try {
      const created = await efs.send(
        new CreateMountTargetCommand({
          FileSystemId: fileSystemId,
          SubnetId: spec.subnetId,
          SecurityGroups: [spec.securityGroupId],
        }),
      );
      return { mountTarget: created, reused: false };
    } catch (err) {
      // A retried create whose first attempt went through: the next round finds and reuses it.
      if (errorName(err) !== 'MountTargetConflict') throw err;
    }
  }
  throw new RunSetupError(`could not create a mount target for ${fileSystemId} in ${spec.subnetId}`);
}

function describeMountTarget(
  efs: EFSClient,
  id: string | undefined,
  abortSignal?: AbortSignal,
): Promise<MountTargetDescription | undefined> {
  return undefinedIfNotFound('MountTargetNotFound', async () => {
    const out = await efs.send(new DescribeMountTargetsCommand({ MountTargetId: id }), { abortSignal });
    return out.MountTargets?.[0];
  });
}

/** Waits (bounded, default 10 min) until the mount target is `available` and has its IP address. */
export async function waitForMountTarget(
  efs: EFSClient,
  mountTarget: MountTargetDescription,
  options: WaitOptions = {},
): Promise<MountTargetDescription & { IpAddress: string }> {
  const id = mountTarget.MountTargetId;
  return waitFor<MountTargetDescription & { IpAddress: string }>(
    `mount target ${id} to become available`,
    async () => {
      const mt = await describeMountTarget(efs, id, options.signal);
      if (mt === undefined) throw new RunSetupError(`mount target ${id} disappeared while creating`);
      if (mt.LifeCycleState === 'available' && mt.IpAddress)
        return { value: { ...mt, IpAddress: mt.IpAddress } };
      if (mt.LifeCycleState !== 'creating' && mt.LifeCycleState !== 'available') {
        throw new RunSetupError(`mount target ${id} went to state ${mt.LifeCycleState} while creating`);
      }
      return { state: mt.LifeCycleState };
    },
    options,
    { timeoutMs: 600_000, initialPollMs: 1000, maxPollMs: 10_000 },
  );
}
