/**
 * Deleting a scratch file system, shared by `mountfleet scratch` and the orphan reaper.
 *
 * EFS refuses DeleteFileSystem (409 FileSystemInUse) while any mount target exists, including one that
 * is still deleting, and publishes no waiter, so: delete every mount target, then retry DeleteFileSystem
 * itself with jittered backoff (bounded) until the mount targets are gone. Polling with the delete rather
 * than with DescribeMountTargets saves the last read: the call that finds them gone is the one that
 * deletes. Every step is idempotent: "not found" and "already deleting" count as progress, so an
 * interrupted teardown is finished by the next caller.
 */
import {
  DeleteFileSystemCommand,
  DeleteMountTargetCommand,
  DescribeMountTargetsCommand,
  TagResourceCommand,
  type EFSClient,
  type MountTargetDescription,
} from '@aws-sdk/client-efs';
import {
  abortAfter,
  errorName,
  errorText,
  PollTimeout,
  pollUntil,
  type Clock,
  type PollResult,
  systemClock,
  undefinedIfNotFound,
} from '../common';
import { TAG_TEARDOWN_STARTED_AT } from '../contract';

export interface TeardownOptions {
  /**
   * The file system's mount targets as the caller just described them (listMountTargets): not read again.
   * @default described here
   */
  readonly mountTargets?: readonly MountTargetDescription[];
  /** Each call is abandoned (it throws) after this long, SDK retries included; only the client's timeouts bound it when unset. */
  readonly callTimeoutMs?: number;
  /** Longest time to retry DeleteFileSystem while mount targets finish deleting. @default 120000 */
  readonly maxWaitMs?: number;
  /** First retry interval; doubles (with jitter) up to maxPollMs. @default 1000 */
  readonly initialPollMs?: number;
  /** @default 10000 */
  readonly maxPollMs?: number;
  readonly clock?: Clock;
  /** Aborting stops the wait early (the outcome is then `pending`) and cuts off a call in flight (it throws). */
  readonly signal?: AbortSignal;
  /** Progress lines for humans (stderr), e.g. "waiting for 1 mount target to delete". */
  readonly onProgress?: (message: string) => void;
  /**
   * The last look before the first irreversible call (DeleteMountTarget, or DeleteFileSystem when there is no
   * mount target), given the mount targets just read: `scratch delete` reads the file system again there and
   * refuses a live run's. Throwing cancels the teardown with nothing deleted.
   */
  readonly beforeDeleting?: (mountTargets: readonly MountTargetDescription[]) => Promise<void>;
}

export type TeardownOutcome =
  /** DeleteFileSystem was accepted (the file system is deleting or gone). */
  | { readonly status: 'deleted'; readonly mountTargetsDeleted: number }
  /** The file system did not exist (an earlier run finished the job). */
  | { readonly status: 'already-gone'; readonly mountTargetsDeleted: number }
  /**
   * Not finished; a later call (or the reaper) resumes. `in-use`: DeleteFileSystem met a mount target the
   * caller had not seen (one appeared since), so describing again and retrying soon can succeed;
   * `mount-targets`: the wait for the deleted mount targets to go away ran out.
   */
  | {
      readonly status: 'pending';
      readonly cause: 'in-use' | 'mount-targets';
      readonly mountTargetsDeleted: number;
      readonly reason: string;
    };

const GONE_MOUNT_TARGET = new Set(['MountTargetNotFound', 'IncorrectMountTargetState']);

/**
 * Tags the file system `mountfleet:teardown-started-at` = now before its teardown, so that the reaper can
 * finish a teardown that stalls while the instance runs on. Best effort: a teardown never waits on it, so a
 * failure is returned as text for the log, never thrown.
 */
export async function markTeardownStarted(
  efs: EFSClient,
  fileSystemId: string,
  now: number,
  abortSignal?: AbortSignal,
): Promise<string | undefined> {
  try {
    await efs.send(
      new TagResourceCommand({
        ResourceId: fileSystemId,
        Tags: [{ Key: TAG_TEARDOWN_STARTED_AT, Value: new Date(now).toISOString() }],
      }),
      { abortSignal },
    );
    return undefined;
  } catch (err) {
    return errorName(err) === 'FileSystemNotFound' ? undefined : errorText(err);
  }
}

/** The file system's mount targets (deleted ones left out), or 'gone' when the file system is. */
export async function listMountTargets(
  efs: EFSClient,
  fileSystemId: string,
  abortSignal?: AbortSignal,
): Promise<MountTargetDescription[] | 'gone'> {
  const targets = await undefinedIfNotFound('FileSystemNotFound', async () => {
    const out = await efs.send(new DescribeMountTargetsCommand({ FileSystemId: fileSystemId }), {
      abortSignal,
    });
    return (out.MountTargets ?? []).filter((mt) => mt.LifeCycleState !== 'deleted');
  });
  return targets ?? 'gone';
}

/** Deletes the mount targets, waits (bounded) until none remain, then deletes the file system. */
export async function teardownFileSystem(
  efs: EFSClient,
  fileSystemId: string,
  options: TeardownOptions = {},
): Promise<TeardownOutcome> {
  let mountTargetsDeleted = 0;
  // A fresh bound for every call; the caller's signal still cuts any of them off.
  const callSignal = () =>
    options.callTimeoutMs === undefined ? options.signal : abortAfter(options.callTimeoutMs, options.signal);
  const targets = options.mountTargets ?? (await listMountTargets(efs, fileSystemId, callSignal()));
  if (targets === 'gone') return { status: 'already-gone', mountTargetsDeleted };
  await options.beforeDeleting?.(targets);

  for (const mt of targets) {
    if (mt.LifeCycleState === 'deleting') continue;
    try {
      await efs.send(new DeleteMountTargetCommand({ MountTargetId: mt.MountTargetId }), {
        abortSignal: callSignal(),
      });
      mountTargetsDeleted++;
    } catch (err) {
      if (!GONE_MOUNT_TARGET.has(errorName(err))) throw err;
    }
  }
  return deleteOnceMountTargetsGone(efs, fileSystemId, {
    options,
    waitingFor: targets.length,
    mountTargetsDeleted,
    callSignal,
  });
}

/**
 * DeleteFileSystem, retried with backoff (pollUntil) while the mount targets finish deleting, up to
 * maxWaitMs: FileSystemInUse is the only answer that waits.
 */
async function deleteOnceMountTargetsGone(
  efs: EFSClient,
  fileSystemId: string,
  t: {
    readonly options: TeardownOptions;
    /** Mount targets the teardown saw, and deleted or found deleting. */
    readonly waitingFor: number;
    readonly mountTargetsDeleted: number;
    readonly callSignal: () => AbortSignal | undefined;
  },
): Promise<TeardownOutcome> {
  const { options, waitingFor, mountTargetsDeleted } = t;
  const maxWaitMs = options.maxWaitMs ?? 120_000;
  const clock = options.clock ?? systemClock;
  const stillDeleting: TeardownOutcome = {
    status: 'pending',
    cause: 'mount-targets',
    mountTargetsDeleted,
    reason: `${waitingFor} mount target(s) still deleting after ${Math.round(maxWaitMs / 1000)} s`,
  };
  const deleteFileSystem = async (): Promise<PollResult<TeardownOutcome>> => {
    try {
      await efs.send(new DeleteFileSystemCommand({ FileSystemId: fileSystemId }), {
        abortSignal: t.callSignal(),
      });
      return { value: { status: 'deleted', mountTargetsDeleted } };
    } catch (err) {
      const name = errorName(err);
      if (name === 'FileSystemNotFound') return { value: { status: 'already-gone', mountTargetsDeleted } };
      if (name !== 'FileSystemInUse') throw err;
    }
    if (waitingFor === 0) {
      // None to wait for: a mount target appeared since the caller looked. Retrying soon can succeed.
      const reason = 'file system still in use';
      return { value: { status: 'pending', cause: 'in-use', mountTargetsDeleted, reason } };
    }
    return options.signal?.aborted ? { value: stillDeleting } : { state: 'in use' };
  };
  try {
    return await pollUntil(deleteFileSystem, {
      // The caller's signal cuts a sleep short; the DeleteFileSystem after it then ends the wait (cut off,
      // it throws), so pollUntil is not given the signal itself.
      clock: { now: () => clock.now(), sleep: (ms) => clock.sleep(ms, options.signal) },
      timeoutMs: maxWaitMs,
      initialPollMs: options.initialPollMs ?? 1000,
      maxPollMs: options.maxPollMs ?? 10_000,
      onWaiting: () =>
        options.onProgress?.(`${fileSystemId}: waiting for ${waitingFor} mount target(s) to delete`),
    });
  } catch (err) {
    if (err instanceof PollTimeout) return stillDeleting;
    throw err;
  }
}
