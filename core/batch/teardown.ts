/**
 * The Batch teardown (lambda/batch-teardown): on a job of the fleet's that reached SUCCEEDED or FAILED, the
 * run's file system is deleted (found by its CreationToken, core/efs's safe delete) and its revision
 * deregistered; a failed attempt that Batch would retry, with attempts left, is first resubmitted as a new run
 * (retry.ts). Every step is idempotent (events arrive twice): a file system already gone and a revision
 * already INACTIVE are progress. Events of other queues or jobs that are no runs of the fleet are ignored.
 */
import { errorText, MountfleetError, type Clock } from '../common';
import { BATCH_FINAL_STATES, runIdOfJobDefinition } from '../contract';
import { deleteRunFileSystem, type RunFileSystemDeletion } from '../efs';
import { parseJobStateChange, retryableReason, type JobStateDetail } from './event';
import { hostAccessProblems } from './host-access';
import { deregisterRevision, describeJobDefinition, withoutRunScratch } from './job-definition';
import { attemptsOf, resubmit, type RetryOutcome } from './retry';
import type { BatchClients } from './run';
import type { BatchFleetSettings } from './settings';

interface BatchTeardownOptions {
  readonly clock?: Clock;
  readonly log?: (line: string) => void;
  /** How long the delete waits for the mount target to go. @default 120000 */
  readonly maxWaitMs?: number;
}

export type BatchTeardownOutcome =
  | { readonly status: 'ignored'; readonly reason: string }
  | {
      readonly status: 'torn-down';
      readonly jobId: string;
      readonly runId: string;
      readonly fileSystem: RunFileSystemDeletion['status'];
      readonly fileSystemId?: string;
      readonly revision: 'deregistered' | 'already-inactive';
      readonly retry?: RetryDecision;
    };

/** What became of a failed attempt: resubmitted (or found resubmitted by an earlier delivery), or not. */
type RetryDecision = RetryOutcome | { readonly status: 'not-retried'; readonly reason: string };

/** Something the teardown could not finish: the handler fails, and the event's redelivery finishes it. */
class BatchTeardownError extends MountfleetError {
  override readonly name = 'BatchTeardownError';
}

/** Handles one event; resolves to what was done, throws BatchTeardownError when a step failed. */
export async function tearDownBatchRun(
  clients: BatchClients,
  settings: BatchFleetSettings,
  event: unknown,
  options: BatchTeardownOptions = {},
): Promise<BatchTeardownOutcome> {
  const parsed = parseJobStateChange(event);
  if ('ignored' in parsed) return { status: 'ignored', reason: parsed.ignored };
  const detail = parsed;
  if (!(BATCH_FINAL_STATES as readonly string[]).includes(detail.status)) {
    return { status: 'ignored', reason: `job ${detail.jobId} is ${detail.status}, not ended` };
  }
  if (!settings.queueArns.includes(detail.jobQueue)) {
    return {
      status: 'ignored',
      reason: `job ${detail.jobId} is in ${detail.jobQueue}, not a queue of fleet ${settings.fleetId}`,
    };
  }
  const runId = runIdOfJobDefinition(settings.fleetId, detail.jobDefinition);
  if (runId === undefined) {
    return {
      status: 'ignored',
      reason: `job ${detail.jobId} runs ${detail.jobDefinition}, no scratch run of fleet ${settings.fleetId}`,
    };
  }
  const failures: string[] = [];
  const retry = await retryIfDue(clients, settings, detail, runId, options).catch((err: unknown) => {
    failures.push(`retry: ${errorText(err)}`);
    return undefined;
  });
  const fs = await deleteRunFileSystem(
    clients.efs,
    { fleetId: settings.fleetId, runId },
    { clock: options.clock, maxWaitMs: options.maxWaitMs, onProgress: options.log },
  ).catch((err: unknown) => {
    failures.push(`file system: ${errorText(err)}`);
    return undefined;
  });
  const revision = await deregisterRevision(clients.batch, detail.jobDefinition).catch((err: unknown) => {
    failures.push(`deregister ${detail.jobDefinition}: ${errorText(err)}`);
    return undefined;
  });
  if (fs?.status === 'pending') failures.push(`file system ${fs.fileSystemId}: ${fs.reason}`);
  if (fs?.status === 'not-ours') {
    options.log?.(`${fs.fileSystemId} holds run ${runId}'s CreationToken without its tags: left alone`);
  }
  if (failures.length > 0 || fs === undefined || revision === undefined) {
    throw new BatchTeardownError(`job ${detail.jobId} (run ${runId}): ${failures.join('; ')}`);
  }
  return {
    status: 'torn-down',
    jobId: detail.jobId,
    runId,
    fileSystem: fs.status,
    fileSystemId: 'fileSystemId' in fs ? fs.fileSystemId : undefined,
    revision,
    retry,
  };
}

/** Resubmits a failed attempt that Batch would retry and that has attempts left. */
async function retryIfDue(
  clients: BatchClients,
  settings: BatchFleetSettings,
  detail: JobStateDetail,
  runId: string,
  options: BatchTeardownOptions,
): Promise<RetryDecision | undefined> {
  if (detail.status !== 'FAILED') return undefined;
  const reason = retryableReason(detail);
  if (reason === undefined) {
    return {
      status: 'not-retried',
      reason: `failed for a reason Batch does not retry: ${detail.statusReason ?? '(none given)'}`,
    };
  }
  const revision = await describeJobDefinition(clients.batch, detail.jobDefinition);
  const attempts = revision && attemptsOf(revision);
  if (revision === undefined || attempts === undefined) {
    return { status: 'not-retried', reason: `${detail.jobDefinition} carries no attempt tags` };
  }
  if (attempts.attempt >= attempts.attempts) {
    return {
      status: 'not-retried',
      reason: `${reason}, and attempt ${attempts.attempt} of ${attempts.attempts} was the last`,
    };
  }
  // The failed run's revision was made from a checked base; checked again, as any base is, before it is copied.
  const problems = hostAccessProblems(withoutRunScratch(revision), settings);
  if (problems.length > 0) {
    return {
      status: 'not-retried',
      reason: `${reason}, but its job definition no longer passes the fleet's host checks: ${problems.join('; ')}`,
    };
  }
  options.log?.(
    `job ${detail.jobId} (attempt ${attempts.attempt} of ${attempts.attempts}): ${reason}; resubmitting as a new run`,
  );
  return resubmit(clients, settings, { detail, runId, revision }, attempts, {
    clock: options.clock,
    log: options.log,
  });
}
