/**
 * Tearing down what a scratch run made, and only that: its mount (while still the one on top),
 * the directories it created, and its file system (looked up by CreationToken when the create got no clear
 * answer). Retried with backoff within a time bound; gives up early once AWS has not answered at all for
 * a while, leaving the tagged file system to the reaper.
 */
import { rmdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { EFSClient } from '@aws-sdk/client-efs';
import { backoffDelay, type Clock, errorName, errorText, abortAfter } from '../common';
import { type MountEntry } from '../system';
import { findFileSystemByToken, madeByRun, markTeardownStarted, teardownFileSystem, tagValue } from '../efs';
import {
  TAG_FLEET,
  TAG_JOB,
  TAG_OWNER_INSTANCE,
  TAG_RUN,
  TAG_TEARDOWN_STARTED_AT,
  creationToken,
} from '../contract';
import { type TerminationNotice } from '../instance';
import { unmount } from './mount';

/** What teardown needs to know of the run. */
interface TeardownRequest {
  readonly efs: EFSClient;
  readonly placement: { readonly instanceId: string };
  readonly fleetId: string;
  readonly jobId: string;
  readonly runId: string;
  readonly path: string;
  /** Teardown gives up once AWS has not answered at all for this long. @default 30000 */
  readonly unreachableTimeoutMs?: number;
}

export type TeardownResult =
  | {
      readonly status: 'deleted' | 'already-gone';
      readonly fileSystemId: string;
      readonly mountTargetsDeleted: number;
    }
  | { readonly status: 'nothing-created' }
  | {
      readonly status: 'incomplete';
      /** `unreachable`: no answer from AWS at all (refused, timed out); `not-deleted`: AWS answered with an error or the waits ran out. */
      readonly cause: 'unreachable' | 'not-deleted';
      readonly fileSystemId?: string;
      readonly reason: string;
      /**
       * The file system carries `mountfleet:teardown-started-at` from this teardown: `scratch delete` then takes
       * its run for over without --force (core/reaper/liveness.ts), and the reaper deletes it after its grace period.
       */
      readonly teardownMarked: boolean;
    };

/** Teardown stops retrying once AWS has not answered at all for this long (the reaper finishes the job). */
const DEFAULT_UNREACHABLE_TIMEOUT_MS = 30_000;

/** True when the error is an answer from the service (an HTTP status), not a transport failure or timeout. */
function answeredByService(err: unknown): boolean {
  return (
    (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode !== undefined
  );
}

/** A call abandoned at its time bound (the SDK passes the abort on as an AbortError). */
function isTimeout(err: unknown): boolean {
  const name = errorName(err);
  return name === 'AbortError' || name === 'TimeoutError';
}

/** On a Spot notice, teardown must finish before the instance goes: bound it by the announced time. */
export function teardownBudgetMs(
  defaultMs: number,
  notice: TerminationNotice | undefined,
  clock: Clock,
): number {
  const at = notice?.time?.getTime();
  if (at === undefined || Number.isNaN(at)) return defaultMs;
  return Math.min(defaultMs, Math.max(15_000, at - clock.now() - 5_000));
}

/** What a run made: all that teardown may undo. */
export interface RunResources {
  /** The file system this run created. */
  fileSystemId?: string;
  /** CreateFileSystem got no clear answer: a file system with this run's token may exist. */
  createOutcomeUnknown: boolean;
  /** The mount this run made at the path (its /proc/self/mountinfo entry). */
  mount?: MountEntry;
  /** The outermost directory this run created for the path (mkdirSync's answer), if any. */
  firstCreatedDirectory?: string;
}

/** Removes the directories this run created, innermost first, up to and including the first one. */
function removeCreatedDirectories(path: string, firstCreated: string): void {
  const top = resolve(firstCreated);
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    rmdirSync(dir);
    if (dir === top || dirname(dir) === dir) return;
  }
}

/**
 * Undoes what the run made: its mount and directories, then its file system (found by its CreationToken when
 * the create got no clear answer), within `timeoutMs`.
 */
export async function tearDown(
  request: TeardownRequest,
  made: RunResources,
  timeoutMs: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<TeardownResult> {
  await undoLocal(request.path, made, log);
  if (made.fileSystemId === undefined && !made.createOutcomeUnknown) return { status: 'nothing-created' };
  return deleteRunFileSystem(request, made.fileSystemId, timeoutMs, clock, log);
}

/** Unmounts the run's mount (while still the one on top) and removes the directories it created. */
async function undoLocal(path: string, made: RunResources, log: (line: string) => void): Promise<void> {
  try {
    if (made.mount !== undefined) {
      const unmounted = await unmount(path, made.mount);
      if (unmounted === 'not-ours')
        log(`${path}: the mount on top is no longer the one this run made: left alone`);
      else if (unmounted !== 'not-mounted')
        log(`unmounted ${path}${unmounted === 'lazy' ? ' (lazily: still busy)' : ''}`);
    }
  } catch (err) {
    // Deleting the mount target below cuts the NFS session anyway; keep going.
    log(`unmount: ${(err as Error).message}`);
  }
  if (made.firstCreatedDirectory !== undefined) {
    try {
      removeCreatedDirectories(path, made.firstCreatedDirectory);
    } catch (err) {
      // Still mounted, or something else was put there meanwhile: leave it rather than guess.
      log(`cannot remove the directories this run created for ${path}: ${(err as Error).message}`);
    }
  }
}

/**
 * Marks the file system as being torn down, then deletes it (mount targets first), retried with backoff until
 * the deadline, or until AWS has not answered at all for `unreachableTimeoutMs`.
 */
async function deleteRunFileSystem(
  request: TeardownRequest,
  madeFileSystemId: string | undefined,
  timeoutMs: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<TeardownResult> {
  let fileSystemId = madeFileSystemId;
  const deadline = clock.now() + timeoutMs;
  const unreachableTimeoutMs = request.unreachableTimeoutMs ?? DEFAULT_UNREACHABLE_TIMEOUT_MS;
  let lastError = '';
  let markTried = false;
  let markWritten = false;
  let unreachableSince: number | undefined;
  const giveUpAt = () => Math.min(deadline, (unreachableSince ?? Infinity) + unreachableTimeoutMs);
  for (let attempt = 0; clock.now() < giveUpAt(); attempt++) {
    // Cut off at the bound, and every call after unreachableTimeoutMs: the SDK's own retries against a
    // black hole (socket timeouts times attempts) would take minutes.
    const bound = abortAfter(Math.max(1, giveUpAt() - clock.now()));
    const callBound = () => abortAfter(unreachableTimeoutMs, bound);
    try {
      if (fileSystemId === undefined) {
        fileSystemId = await madeWithRunToken(request, callBound(), log);
        if (fileSystemId === undefined) return { status: 'nothing-created' };
      }
      if (!markTried) {
        markTried = true;
        const failed = await markTeardownStarted(request.efs, fileSystemId, clock.now(), callBound());
        if (failed) log(`cannot tag ${fileSystemId} as being torn down (${failed}); tearing down anyway`);
        markWritten = failed === undefined;
      }
      const outcome = await teardownFileSystem(request.efs, fileSystemId, {
        clock,
        maxWaitMs: Math.max(0, giveUpAt() - clock.now()),
        onProgress: log,
        signal: bound,
        callTimeoutMs: unreachableTimeoutMs,
      });
      if (outcome.status !== 'pending') {
        return { status: outcome.status, fileSystemId, mountTargetsDeleted: outcome.mountTargetsDeleted };
      }
      unreachableSince = undefined;
      lastError = outcome.reason;
      if (outcome.cause !== 'in-use') break;
    } catch (err) {
      // Out of time while AWS was answering: keep the last real error.
      if (bound.aborted && unreachableSince === undefined) break;
      if (answeredByService(err)) unreachableSince = undefined;
      // A call abandoned after unreachableTimeoutMs: AWS has been silent for that long already.
      else if (isTimeout(err)) unreachableSince ??= clock.now() - unreachableTimeoutMs;
      else unreachableSince ??= clock.now();
      lastError = errorText(err);
      log(`teardown attempt ${attempt + 1} failed (${lastError}); retrying`);
    }
    await clock.sleep(Math.min(backoffDelay(attempt, 1000, 10_000), Math.max(0, giveUpAt() - clock.now())));
  }
  return {
    status: 'incomplete',
    cause: unreachableSince === undefined ? 'not-deleted' : 'unreachable',
    fileSystemId,
    teardownMarked: markWritten,
    reason:
      unreachableSince === undefined
        ? lastError || `out of time (${Math.round(timeoutMs / 1000)} s)`
        : `no answer from AWS for ${Math.round((clock.now() - unreachableSince) / 1000)} s: ${lastError}`,
  };
}

/**
 * The file system a create whose answer was lost made, found by the run's CreationToken; undefined when there
 * is none, or the one holding the token is not this run's (our create would have tagged it with this fleet
 * and run).
 */
async function madeWithRunToken(
  request: TeardownRequest,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<string | undefined> {
  const found = await findFileSystemByToken(
    request.efs,
    creationToken(request.fleetId, request.runId),
    signal,
  );
  if (found === undefined) return undefined;
  if (!madeByRun(found, request)) {
    log(
      `${found.FileSystemId} holds this run's CreationToken but not its tags ` +
        `(${TAG_FLEET}=${tagValue(found, TAG_FLEET) ?? '(none)'}, ${TAG_RUN}=${tagValue(found, TAG_RUN) ?? '(none)'}): left alone`,
    );
    return undefined;
  }
  return found.FileSystemId!;
}

export function reportTeardown(
  teardown: TeardownResult,
  request: TeardownRequest,
  log: (line: string) => void,
): void {
  switch (teardown.status) {
    case 'deleted':
      log(
        `deleted ${teardown.fileSystemId}${teardown.mountTargetsDeleted > 0 ? ' and its mount target' : ''}`,
      );
      return;
    case 'already-gone':
      log(`${teardown.fileSystemId} was already gone`);
      return;
    case 'nothing-created':
      log(`no file system was created for job ${request.jobId}`);
      return;
    case 'incomplete': {
      const what = teardown.fileSystemId ?? `the file system of job ${request.jobId}`;
      const headline =
        teardown.cause === 'unreachable'
          ? `TEARDOWN INCOMPLETE (cannot reach AWS): ${what} was not deleted (${teardown.reason}).`
          : `TEARDOWN INCOMPLETE (could not delete): ${what} still exists (${teardown.reason}).`;
      const fleet = `--fleet ${request.fleetId}`;
      // What `scratch delete` needs now: without this teardown's mark, this instance (still running) makes the
      // file system look like a live run's, so only --force deletes it; this run has ended either way.
      const force = teardown.teardownMarked ? '' : ' --force';
      const deleteNow =
        teardown.fileSystemId !== undefined
          ? `\`mountfleet scratch delete ${teardown.fileSystemId} ${fleet}${force}\``
          : `\`mountfleet scratch list ${fleet}\` (job ${request.jobId}, run ${request.runId}), then ` +
            `\`mountfleet scratch delete <id> ${fleet}${force}\``;
      log(
        `${headline} It keeps its tags ${TAG_FLEET}=${request.fleetId}, ${TAG_OWNER_INSTANCE}=${request.placement.instanceId}, ` +
          `${TAG_JOB}=${request.jobId}, ${TAG_RUN}=${request.runId}` +
          (teardown.teardownMarked
            ? ` and ${TAG_TEARDOWN_STARTED_AT}: the orphan reaper deletes it once that mark is older than its grace period (30 min by default), or once this instance is gone`
            : `: the orphan reaper deletes it once this instance is gone, or once it has seen it idle for two of its windows (about an hour by default)`) +
          `. To delete it now${teardown.cause === 'unreachable' ? ', once AWS is reachable' : ''}, run ${deleteNow}` +
          (teardown.teardownMarked
            ? ''
            : ` (--force: the file system carries no teardown mark and this instance still runs, so scratch delete would take it for a live run's; this run has ended)`) +
          '. A re-run of the job gets a file system of its own.',
      );
      return;
    }
  }
}
