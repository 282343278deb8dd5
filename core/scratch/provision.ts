/**
 * Creating (or finding again and adopting) a job's file system, and waiting until it is usable; its mount
 * target is mount-target.ts's. EFS has no waiters, so every wait polls with jittered backoff and is bounded
 * (poll.ts).
 *
 * Interruption (the `signal`) cuts off the reads and waits in flight, so SIGTERM never waits out their SDK
 * retries. The creates (here and in mount-target.ts) are never aborted: the service may still carry one out after we stop listening,
 * later than teardown looks for it, and it would leak. They are bounded by the client's timeouts instead.
 */
import { DescribeInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import {
  CreateFileSystemCommand,
  DescribeFileSystemsCommand,
  TagResourceCommand,
  type EFSClient,
  type FileSystemDescription,
} from '@aws-sdk/client-efs';
import { systemClock } from '../clock';
import { errorName, errorText } from '../errors';
import { tagValue } from '../fleet-file-systems';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE } from '../tags';
import { creationToken, nameTag } from './naming';
import { pollUntil, type WaitOptions } from './poll';
import {
  checkInterrupted,
  CreateOutcomeUnknown,
  ScratchInterrupted,
  ScratchInUseError,
  ScratchSetupError,
} from './setup-errors';

/** True when the service answered with a client error (4xx): the request was refused and not carried out. */
function refusedByService(err: unknown): boolean {
  const e = err as { $fault?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  const status = e?.$metadata?.httpStatusCode ?? 0;
  return e?.$fault === 'client' && status >= 400 && status < 500;
}

export interface ScratchFileSystemSpec {
  readonly fleetId: string;
  readonly jobId: string;
  readonly ownerInstanceId: string;
  /** AZ name (One Zone file systems are created by name), e.g. us-east-1a. */
  readonly availabilityZoneName: string;
  /** KMS key; the AWS managed key for EFS when unset. */
  readonly kmsKeyId?: string;
}

/** The file system made with this CreationToken, if any (a deleted one no longer counts). */
export async function findFileSystemByToken(
  efs: EFSClient,
  token: string,
  abortSignal?: AbortSignal,
): Promise<FileSystemDescription | undefined> {
  const out = await efs.send(new DescribeFileSystemsCommand({ CreationToken: token }), { abortSignal });
  return (out.FileSystems ?? []).find((fs) => fs.LifeCycleState !== 'deleted');
}

async function describeFileSystem(
  efs: EFSClient,
  id: string,
  abortSignal?: AbortSignal,
): Promise<FileSystemDescription | undefined> {
  try {
    const out = await efs.send(new DescribeFileSystemsCommand({ FileSystemId: id }), { abortSignal });
    return out.FileSystems?.[0];
  } catch (err) {
    if (errorName(err) === 'FileSystemNotFound') return undefined;
    throw err;
  }
}

export interface EnsuredFileSystem {
  readonly fileSystem: FileSystemDescription;
  /** True when the CreationToken led to a file system an earlier run of this job made. */
  readonly reused: boolean;
}

/**
 * Creates the job's encrypted, bursting, Backup-off One Zone file system with the tag contract, or finds
 * the one an earlier attempt made with the same CreationToken. A reused file system gets the current
 * instance as its owner, so the reaper does not take a dead previous owner as evidence against it; one
 * another live instance is still using is refused (see checkNotInUse).
 *
 * Throws CreateOutcomeUnknown when the create call got no clear answer; every other error means this
 * call neither created nor adopted a file system.
 */
export async function ensureFileSystem(
  efs: EFSClient,
  ec2: EC2Client,
  spec: ScratchFileSystemSpec,
  options: WaitOptions = {},
): Promise<EnsuredFileSystem> {
  const token = creationToken(spec.fleetId, spec.jobId);
  // A previous file system of this job may still be deleting (a reaper or an operator got to it first):
  // wait until it is gone, then create a fresh one. Bounded: the wait itself has a deadline.
  for (let round = 0; round < 3; round++) {
    checkInterrupted(options.signal);
    try {
      const created = await efs.send(
        new CreateFileSystemCommand({
          CreationToken: token,
          PerformanceMode: 'generalPurpose',
          ThroughputMode: 'bursting',
          Encrypted: true,
          ...(spec.kmsKeyId ? { KmsKeyId: spec.kmsKeyId } : {}),
          AvailabilityZoneName: spec.availabilityZoneName,
          Backup: false,
          Tags: [
            { Key: TAG_FLEET, Value: spec.fleetId },
            { Key: TAG_OWNER_INSTANCE, Value: spec.ownerInstanceId },
            { Key: TAG_JOB, Value: spec.jobId },
            { Key: 'Name', Value: nameTag(spec.fleetId, spec.jobId) },
          ],
        }),
      );
      return { fileSystem: created, reused: false };
    } catch (err) {
      if (errorName(err) !== 'FileSystemAlreadyExists') {
        if (refusedByService(err)) throw err;
        throw new CreateOutcomeUnknown(
          `CreateFileSystem for job ${spec.jobId} got no clear answer (${errorText(err)})`,
          { cause: err },
        );
      }
    }

    const existing = await findFileSystemByToken(efs, token, options.signal);
    if (existing === undefined) continue; // deleted between our create and describe: create again
    if (existing.LifeCycleState === 'deleting') {
      await pollUntil(
        `the previous file system ${existing.FileSystemId} of job ${spec.jobId} to finish deleting`,
        async () => {
          const fs = await findFileSystemByToken(efs, token, options.signal);
          return fs === undefined ? { value: undefined } : { state: fs.LifeCycleState ?? 'unknown' };
        },
        options,
        { timeoutMs: 300_000, initialPollMs: 1000, maxPollMs: 10_000 },
      );
      continue;
    }
    checkReusable(existing, spec);
    await checkOwnerGone(ec2, existing, spec, options.signal);
    const adopted = await takeOwnership(efs, existing, spec, options);
    return { fileSystem: adopted, reused: true };
  }
  throw new ScratchSetupError(
    `the file system of job ${spec.jobId} kept disappearing while being created (CreationToken ${token})`,
  );
}

function checkReusable(fs: FileSystemDescription, spec: ScratchFileSystemSpec): void {
  const id = fs.FileSystemId;
  if (tagValue(fs, TAG_FLEET) !== spec.fleetId) {
    throw new ScratchSetupError(
      `file system ${id} holds CreationToken ${fs.CreationToken} but is not tagged ${TAG_FLEET}=${spec.fleetId}: ` +
        `it was not made by mountfleet; use another --job`,
    );
  }
  if (fs.AvailabilityZoneName !== spec.availabilityZoneName) {
    throw new ScratchSetupError(
      `job ${spec.jobId} already has file system ${id} in ${fs.AvailabilityZoneName ?? 'another zone'}, ` +
        `but this instance is in ${spec.availabilityZoneName}: run \`mountfleet scratch delete ${id}\` or use another --job`,
    );
  }
  if (fs.LifeCycleState === 'error') {
    throw new ScratchSetupError(
      `file system ${id} of job ${spec.jobId} is in state error: ` +
        `run \`mountfleet scratch delete ${id}\` or use another --job`,
    );
  }
}

/**
 * Refuses a file system whose recorded owner is another instance that is still pending or running: only
 * the instance that created (or last adopted) it may use it while it runs, whether or not it has made its
 * mount target yet — taking it over would have each run delete the other's scratch at its end. A
 * terminated, stopped or unknown owner is no obstacle (the usual re-run after a crash). When the owner's
 * state cannot be read, refuse: proceeding is the choice that can destroy data.
 */
async function checkOwnerGone(
  ec2: EC2Client,
  fs: FileSystemDescription,
  spec: ScratchFileSystemSpec,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const id = fs.FileSystemId!;
  const owner = tagValue(fs, TAG_OWNER_INSTANCE);
  if (owner === undefined || owner === spec.ownerInstanceId) return;
  let ownerState: string | undefined;
  try {
    // The instance-id filter, not InstanceIds: an unknown (long gone) id then answers with nothing
    // instead of failing the call.
    const out = await ec2.send(
      new DescribeInstancesCommand({ Filters: [{ Name: 'instance-id', Values: [owner] }] }),
      { abortSignal },
    );
    ownerState = out.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === owner)
      ?.State?.Name;
  } catch (err) {
    if (abortSignal?.aborted) throw new ScratchInterrupted();
    throw new ScratchInUseError(
      `cannot tell whether ${owner}, the owner of job ${spec.jobId}'s file system ${id}, is still running ` +
        `(${errorText(err)}): not taking over a file system another run may be using; ` +
        `retry, or use another --job`,
    );
  }
  if (ownerState === 'pending' || ownerState === 'running') {
    throw new ScratchInUseError(
      `job ${spec.jobId}'s file system ${id} belongs to instance ${owner} (${ownerState}), which may be running ` +
        `the job: wait for that run to end, or use another --job; ` +
        `if no run of job ${spec.jobId} is left on ${owner}, run \`mountfleet scratch delete ${id}\` first`,
    );
  }
}

/** How long an adopting run waits after moving the owner tag before reading it back (see takeOwnership). */
export const OWNER_SETTLE_MS = 2000;

/**
 * Moves the owner tag to this instance and checks that it stuck. EFS tags have no conditional write, so
 * two instances adopting the same orphan could both succeed: each one re-reads the tag just before writing
 * (a run that adopted it meanwhile is alive, so checkOwnerGone refuses), writes, waits OWNER_SETTLE_MS
 * (longer than the gap between another run's read and write), and reads it back; whoever finds another
 * instance's id there lost and backs off. The last writer wins and every other run sees it.
 */
async function takeOwnership(
  efs: EFSClient,
  fs: FileSystemDescription,
  spec: ScratchFileSystemSpec,
  options: WaitOptions,
): Promise<FileSystemDescription> {
  const id = fs.FileSystemId!;
  if (tagValue(fs, TAG_OWNER_INSTANCE) === spec.ownerInstanceId) return fs;
  const current = await describeFileSystem(efs, id, options.signal);
  if (current === undefined)
    throw new ScratchSetupError(`file system ${id} of job ${spec.jobId} disappeared`);
  if (tagValue(current, TAG_OWNER_INSTANCE) !== tagValue(fs, TAG_OWNER_INSTANCE)) {
    throw new ScratchInUseError(
      `job ${spec.jobId}'s file system ${id} was just taken over by instance ${tagValue(current, TAG_OWNER_INSTANCE) ?? '(none)'}: ` +
        `not sharing it; wait for that run to end, or use another --job`,
    );
  }
  try {
    await efs.send(
      new TagResourceCommand({
        ResourceId: id,
        Tags: [{ Key: TAG_OWNER_INSTANCE, Value: spec.ownerInstanceId }],
      }),
      { abortSignal: options.signal },
    );
  } catch (err) {
    if (errorName(err) !== 'AccessDeniedException' && errorName(err) !== 'AccessDenied') throw err;
    // Not fatal: the job can still run; only the reaper's owner evidence is stale, and a concurrent
    // adopter cannot be detected.
    options.onProgress?.(
      `cannot move ${TAG_OWNER_INSTANCE} of ${id} to ${spec.ownerInstanceId} (access denied): ` +
        `the reaper may take its previous owner's absence as evidence against it`,
    );
    return current;
  }
  await (options.clock ?? systemClock).sleep(OWNER_SETTLE_MS, options.signal);
  checkInterrupted(options.signal);
  const after = await describeFileSystem(efs, id, options.signal);
  const owner = after === undefined ? undefined : tagValue(after, TAG_OWNER_INSTANCE);
  if (after === undefined || owner !== spec.ownerInstanceId) {
    throw new ScratchInUseError(
      `job ${spec.jobId}'s file system ${id} was adopted at the same time by instance ${owner ?? '(none)'}: ` +
        `that run keeps it; wait for it to end, or use another --job`,
    );
  }
  return after;
}

/** Waits (bounded, default 10 min) until the file system is `available`. */
export async function waitForFileSystem(
  efs: EFSClient,
  fileSystemId: string,
  options: WaitOptions = {},
): Promise<FileSystemDescription> {
  return pollUntil<FileSystemDescription>(
    `file system ${fileSystemId} to become available`,
    async () => {
      const fs = await describeFileSystem(efs, fileSystemId, options.signal);
      if (fs === undefined)
        throw new ScratchSetupError(`file system ${fileSystemId} disappeared while creating`);
      if (fs.LifeCycleState === 'available') return { value: fs };
      if (fs.LifeCycleState !== 'creating' && fs.LifeCycleState !== 'updating') {
        throw new ScratchSetupError(
          `file system ${fileSystemId} went to state ${fs.LifeCycleState} while creating`,
        );
      }
      return { state: fs.LifeCycleState };
    },
    options,
    { timeoutMs: 600_000, initialPollMs: 500, maxPollMs: 5000 },
  );
}
