/**
 * A run's file system, whoever runs the run (`scratch run` on an instance, a Batch run made by the submit function
 * or the teardown's retry): the one owner of its life. It is created by its CreationToken (`mf/<fleet>/<run id>`:
 * only this run's own lost answer can match it), encrypted with the fleet's key, One Zone in the run's zone and
 * tagged with the contract; it gets one mount target in the fleet's subnet and security group; it is found again
 * only by that token and counts as the run's only when it carries the run's fleet and run tags; and it is deleted
 * through the safe delete (teardown.ts: mount targets first, then the file system, re-read right before).
 */
import type { EFSClient, FileSystemDescription, MountTargetDescription } from '@aws-sdk/client-efs';
import { creationToken } from '../contract';
import { ensureMountTarget, waitForMountTarget } from './mount-target';
import { createFileSystem, findFileSystemByToken, madeByRun, waitForFileSystem } from './run-create';
import { teardownFileSystem, type TeardownOptions } from './teardown';
import type { WaitOptions } from './wait';

/** Which run a file system is: its fleet and run id (the token and the tags come from them). */
export interface RunIdentity {
  readonly fleetId: string;
  readonly runId: string;
}

/** Everything a run's file system is made with. */
export interface RunFileSystemSpec extends RunIdentity {
  /** The job the run belongs to (a tag: many runs of one job each have their own file system). */
  readonly jobId: string;
  /** AZ name (One Zone file systems are created by name), e.g. us-east-1a. */
  readonly availabilityZoneName: string;
  /** The mount target's subnet (in that zone) and security group. */
  readonly subnetId: string;
  readonly securityGroupId: string;
  /** The fleet's scratch KMS key; the AWS managed key for EFS when unset. */
  readonly kmsKeyId?: string;
  /** The instance that runs the job (`scratch run`); none for a Batch run, whose instance is not known yet. */
  readonly ownerInstanceId?: string;
  /** Tags beyond the contract's (a Batch run's queue and claim). */
  readonly extraTags?: readonly { readonly Key: string; readonly Value: string }[];
}

/** The steps of provisioning, in order, each with what it made or found (for progress lines and bookkeeping). */
export type ProvisionStep =
  | { readonly step: 'created'; readonly fileSystem: FileSystemDescription }
  | { readonly step: 'available'; readonly fileSystemId: string }
  | { readonly step: 'mount-target'; readonly fileSystemId: string }
  | { readonly step: 'mount-target-created'; readonly mountTarget: MountTargetDescription }
  | {
      readonly step: 'mount-target-ready';
      readonly mountTarget: MountTargetDescription & { IpAddress: string };
      readonly reused: boolean;
    };

interface ProvisionOptions extends WaitOptions {
  /**
   * Called at each step. At `created` the file system exists: the caller records it, for its teardown, before
   * anything can fail; throwing there stops the provisioning (the caller then owns the cleanup).
   */
  readonly onStep?: (step: ProvisionStep) => void | Promise<void>;
}

/** A provisioned run file system: available, with its mount target available and addressed. */
export interface ProvisionedRunFileSystem {
  readonly fileSystemId: string;
  readonly mountTarget: MountTargetDescription & { IpAddress: string };
}

/**
 * Creates the run's file system (or finds the one its own lost answer made), waits until it is available, makes
 * its mount target and waits until that has its address. Throws CreateOutcomeUnknown when the create got no clear
 * answer, RunSetupError when a resource could not be made usable, RunInterrupted when the signal fired.
 */
export async function provisionRunFileSystem(
  efs: EFSClient,
  spec: RunFileSystemSpec,
  options: ProvisionOptions = {},
): Promise<ProvisionedRunFileSystem> {
  const created = await createFileSystem(efs, spec, options);
  const fileSystemId = created.FileSystemId!;
  await options.onStep?.({ step: 'created', fileSystem: created });
  if (created.LifeCycleState !== 'available') await waitForFileSystem(efs, fileSystemId, options);
  await options.onStep?.({ step: 'available', fileSystemId });
  await options.onStep?.({ step: 'mount-target', fileSystemId });
  const ensured = await ensureMountTarget(
    efs,
    fileSystemId,
    { subnetId: spec.subnetId, securityGroupId: spec.securityGroupId },
    options,
  );
  await options.onStep?.({ step: 'mount-target-created', mountTarget: ensured.mountTarget });
  const mountTarget = await waitForMountTarget(efs, ensured.mountTarget, options);
  await options.onStep?.({ step: 'mount-target-ready', mountTarget, reused: ensured.reused });
  return { fileSystemId, mountTarget };
}

/** What the run's CreationToken leads to: its file system, nothing, or one that is not the run's. */
export type RunFileSystemLookup =
  | { readonly status: 'found'; readonly fileSystem: FileSystemDescription & { FileSystemId: string } }
  | { readonly status: 'none' }
  | { readonly status: 'not-ours'; readonly fileSystemId: string };

/** The run's file system, looked up by its CreationToken and checked to carry the run's fleet and run tags. */
export async function findRunFileSystem(
  efs: EFSClient,
  run: RunIdentity,
  signal?: AbortSignal,
): Promise<RunFileSystemLookup> {
  const found = await findFileSystemByToken(efs, creationToken(run.fleetId, run.runId), signal);
  if (found?.FileSystemId === undefined) return { status: 'none' };
  if (!madeByRun(found, run)) return { status: 'not-ours', fileSystemId: found.FileSystemId };
  return { status: 'found', fileSystem: { ...found, FileSystemId: found.FileSystemId } };
}

export type RunFileSystemDeletion =
  | { readonly status: 'deleted' | 'already-gone'; readonly fileSystemId: string }
  | { readonly status: 'not-found' }
  | { readonly status: 'not-ours'; readonly fileSystemId: string }
  | { readonly status: 'pending'; readonly fileSystemId: string; readonly reason: string };

/**
 * Deletes the run's file system when there is one and it is the run's (a file system under the run's token without
 * its tags is left alone); the delete is teardown.ts's, which re-reads the mount targets right before.
 */
export async function deleteRunFileSystem(
  efs: EFSClient,
  run: RunIdentity,
  options: TeardownOptions = {},
): Promise<RunFileSystemDeletion> {
  const lookup = await findRunFileSystem(efs, run, options.signal);
  if (lookup.status === 'none') return { status: 'not-found' };
  if (lookup.status === 'not-ours') return lookup;
  const fileSystemId = lookup.fileSystem.FileSystemId;
  const outcome = await teardownFileSystem(efs, fileSystemId, options);
  if (outcome.status === 'pending') return { status: 'pending', fileSystemId, reason: outcome.reason };
  return { status: outcome.status, fileSystemId };
}
