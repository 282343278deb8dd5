/**
 * A retry of a Batch run with scratch is a new run (its own file system and revision), made by the teardown
 * of the failed one. Its run id, and so its file system's CreationToken, is derived from the failed run's, so
 * every delivery of the same event names the same retry and races on the same CreateFileSystem. Only the
 * delivery whose create made the file system (it carries that delivery's claim nonce) registers and submits;
 * one that finds the file system already there, or made by another delivery's create, stops and says so.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { JobDefinition } from '@aws-sdk/client-batch';
import { TAG_BATCH_ATTEMPT, TAG_BATCH_ATTEMPTS, TAG_BATCH_FIRST_JOB } from '../contract';
import { findRunFileSystem } from '../efs';
import type { JobStateDetail } from './event';
import { SCRATCH_VOLUME_NAME } from './job-definition';
import { readFleetQueue, scratchPlacement } from './queue';
import { jobIdOfRun } from './run-job';
import {
  RunMadeElsewhere,
  submitScratchRun,
  type BatchClients,
  type RunOptions,
  type SubmittedRun,
} from './run';
import type { BatchFleetSettings } from './settings';

/** The run id of the retry of `runId`: the same start stamp, 64 bits of a hash of the failed run's id. */
export function retryRunId(runId: string): string {
  const stamp = runId.slice(1, runId.indexOf('-'));
  return `r${stamp}-${createHash('sha256').update(`${runId}/retry`).digest('hex').slice(0, 16)}`;
}

/** Attempt, attempts and first job of a run, from its revision's tags (undefined when they are not there). */
export function attemptsOf(
  revision: JobDefinition,
): { attempt: number; attempts: number; firstJobId?: string } | undefined {
  const attempt = Number(revision.tags?.[TAG_BATCH_ATTEMPT]);
  const attempts = Number(revision.tags?.[TAG_BATCH_ATTEMPTS]);
  if (!Number.isInteger(attempt) || !Number.isInteger(attempts)) return undefined;
  return { attempt, attempts, firstJobId: revision.tags?.[TAG_BATCH_FIRST_JOB] };
}

export type RetryOutcome =
  | { readonly status: 'submitted'; readonly run: SubmittedRun }
  | { readonly status: 'already-made'; readonly runId: string; readonly fileSystemId: string }
  | { readonly status: 'already-submitted'; readonly runId: string; readonly jobId: string };

/**
 * Submits the next attempt of a failed run as a new run in the same queue, with the failed run's revision as
 * its base (the scratch volume replaced), its command, job name and first job.
 */
export async function resubmit(
  clients: BatchClients,
  settings: BatchFleetSettings,
  failed: { readonly detail: JobStateDetail; readonly runId: string; readonly revision: JobDefinition },
  attempts: { attempt: number; attempts: number; firstJobId?: string },
  options: RunOptions,
): Promise<RetryOutcome> {
  const { fleetId } = settings;
  const runId = retryRunId(failed.runId);
  const existing = await findRunFileSystem(clients.efs, { fleetId, runId }, options.signal);
  if (existing.status === 'found') {
    return { status: 'already-made', runId, fileSystemId: existing.fileSystem.FileSystemId };
  }
  if (existing.status === 'not-ours') {
    throw new Error(`retry run ${runId}: ${existing.fileSystemId} holds its CreationToken without its tags`);
  }
  // A delivery that comes after the retry ended (and its file system went) finds the retry's job instead.
  const jobId = await jobIdOfRun(clients.batch, failed.detail.jobQueue, fleetId, runId, options.signal);
  if (jobId !== undefined) return { status: 'already-submitted', runId, jobId };
  const queue = await readFleetQueue(clients.batch, failed.detail.jobQueue, options.signal);
  const placement = await scratchPlacement(clients.ec2, queue, options.signal);
  const scratchPath = failed.revision.containerProperties?.mountPoints?.find(
    (m) => m.sourceVolume === SCRATCH_VOLUME_NAME,
  )?.containerPath;
  if (scratchPath === undefined) throw new Error(`${failed.detail.jobDefinition} mounts no scratch volume`);
  const claim = randomBytes(8).toString('hex');
  let run: SubmittedRun;
  try {
    run = await submitScratchRun(
      clients,
      {
        fleetId,
        queue,
        placement,
        base: failed.revision,
        scratchPath,
        runId,
        jobName: failed.detail.jobName ?? `retry-${failed.detail.jobId}`,
        command: failed.detail.container?.command,
        attempt: attempts.attempt + 1,
        attempts: attempts.attempts,
        firstJobId: attempts.firstJobId ?? failed.detail.jobId,
        claim,
        kmsKeyId: settings.kmsKeyId,
      },
      options,
    );
  } catch (err) {
    if (!(err instanceof RunMadeElsewhere)) throw err;
    options.log?.(
      `retry run ${runId}: file system ${err.fileSystemId} was made by another delivery of this event at the same time; it submits the retry, this one stops`,
    );
    return { status: 'already-made', runId, fileSystemId: err.fileSystemId };
  }
  return { status: 'submitted', run };
}
