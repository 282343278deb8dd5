/**
 * Creating a run's file system and waiting until it is usable; its mount target is mount-target.ts's. EFS
 * has no waiters, so every wait polls with jittered backoff and is bounded (wait.ts).
 *
 * One run, one file system: the CreationToken names the run (core/contract/creation-token.ts), so the only file system a
 * FileSystemAlreadyExists answer can point to is the one an earlier attempt of this same call made (the SDK
 * retried after a lost answer). Nothing here ever takes over a file system another run made.
 *
 * Interruption (the `signal`) cuts off the reads and waits in flight, so SIGTERM never waits out their SDK
 * retries. The creates (here and in mount-target.ts) are never aborted: the service may still carry one out after we stop listening,
 * later than teardown looks for it, and it would leak. They are bounded by the client's timeouts instead.
 */
import {
  CreateFileSystemCommand,
  DescribeFileSystemsCommand,
  type EFSClient,
  type FileSystemDescription,
} from '@aws-sdk/client-efs';
import { errorName, errorText, undefinedIfNotFound } from '../common';
import { tagValue } from './fleet-file-systems';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE, TAG_RUN, creationToken } from '../contract';
import { waitFor, type WaitOptions } from './wait';
import { checkInterrupted, CreateOutcomeUnknown, RunSetupError } from './setup-errors';

/** True when the service answered with a client error (4xx): the request was refused and not carried out. */
/** The `Name` tag shown in the console (tag values may be up to 256 characters). */
export function nameTag(fleetId: string, jobId: string): string {
  return `mountfleet-scratch-${fleetId}-${jobId}`.slice(0, 256);
}

function refusedByService(err: unknown): boolean {
  const e = err as { $fault?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  const status = e?.$metadata?.httpStatusCode ?? 0;
  return e?.$fault === 'client' && status >= 400 && status < 500;
}

interface ScratchFileSystemSpec {
  readonly fleetId: string;
  readonly jobId: string;
  /** This run's id (core/contract's generateRunId): the CreationToken and the `mountfleet:run` tag. */
  readonly runId: string;
  /** The instance that runs the job (`scratch run`); none for a Batch run, whose instance is not known yet. */
  readonly ownerInstanceId?: string;
  /** Tags beyond the contract's (a Batch run's `mountfleet:batch-queue`). */
  readonly extraTags?: readonly { readonly Key: string; readonly Value: string }[];
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

function describeFileSystem(
  efs: EFSClient,
  id: string,
  abortSignal?: AbortSignal,
): Promise<FileSystemDescription | undefined> {
  return undefinedIfNotFound('FileSystemNotFound', async () => {
    const out = await efs.send(new DescribeFileSystemsCommand({ FileSystemId: id }), { abortSignal });
    return out.FileSystems?.[0];
  });
}

/** True when the file system carries this run's fleet and run tags: made by this run and no other. */
export function madeByRun(fs: FileSystemDescription, spec: Pick<ScratchFileSystemSpec, 'fleetId' | 'runId'>) {
  return tagValue(fs, TAG_FLEET) === spec.fleetId && tagValue(fs, TAG_RUN) === spec.runId;
}

/**
 * Creates the run's encrypted, bursting, Backup-off One Zone file system with the tag contract. When the
 * create was already carried out by an earlier attempt of this call (FileSystemAlreadyExists for the run's
 * own token), returns that file system.
 *
 * Throws CreateOutcomeUnknown when the create call got no clear answer; every other error means no file
 * system of this run exists.
 */
export async function createFileSystem(
  efs: EFSClient,
  spec: ScratchFileSystemSpec,
  options: WaitOptions = {},
): Promise<FileSystemDescription> {
  checkInterrupted(options.signal);
  const token = creationToken(spec.fleetId, spec.runId);
  try {
    return await efs.send(
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
          ...(spec.ownerInstanceId === undefined
            ? []
            : [{ Key: TAG_OWNER_INSTANCE, Value: spec.ownerInstanceId }]),
          { Key: TAG_JOB, Value: spec.jobId },
          { Key: TAG_RUN, Value: spec.runId },
          { Key: 'Name', Value: nameTag(spec.fleetId, spec.jobId) },
          ...(spec.extraTags ?? []),
        ],
      }),
    );
  } catch (err) {
    if (errorName(err) !== 'FileSystemAlreadyExists') {
      if (refusedByService(err)) throw err;
      throw new CreateOutcomeUnknown(
        `CreateFileSystem for job ${spec.jobId} got no clear answer (${errorText(err)})`,
        { cause: err },
      );
    }
  }
  // Our own earlier attempt was carried out and its answer lost: the token is this run's alone.
  const existing = await findFileSystemByToken(efs, token, options.signal);
  if (existing === undefined || !madeByRun(existing, spec) || existing.LifeCycleState === 'deleting') {
    throw new RunSetupError(
      `CreationToken ${token} of this run is taken by ${existing?.FileSystemId ?? 'a file system that is gone'} ` +
        `that this run cannot use (${existing === undefined ? 'deleted' : `state ${existing.LifeCycleState}, tags not this run's`}): ` +
        'run the job again (every run draws a new token)',
    );
  }
  return existing;
}

/** Waits (bounded, default 10 min) until the file system is `available`. */
export async function waitForFileSystem(
  efs: EFSClient,
  fileSystemId: string,
  options: WaitOptions = {},
): Promise<FileSystemDescription> {
  return waitFor<FileSystemDescription>(
    `file system ${fileSystemId} to become available`,
    async () => {
      const fs = await describeFileSystem(efs, fileSystemId, options.signal);
      if (fs === undefined) throw new RunSetupError(`file system ${fileSystemId} disappeared while creating`);
      if (fs.LifeCycleState === 'available') return { value: fs };
      if (fs.LifeCycleState !== 'creating' && fs.LifeCycleState !== 'updating') {
        throw new RunSetupError(
          `file system ${fileSystemId} went to state ${fs.LifeCycleState} while creating`,
        );
      }
      return { state: fs.LifeCycleState };
    },
    options,
    { timeoutMs: 600_000, initialPollMs: 500, maxPollMs: 5000 },
  );
}
