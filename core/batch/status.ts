/**
 * `mountfleet batch status JOB`: the job and every attempt of it. With scratch, each attempt is a job of its
 * own (a retry is a new run, retry.ts): attempt n+1's run id follows from attempt n's, and its job is the one
 * in the queue that runs that run's revision (ListJobs, filter JOB_DEFINITION). The file system id comes from
 * each run's revision (still described once INACTIVE), its existence and burst credit from EFS and CloudWatch.
 */
import { DescribeJobsCommand, type JobDetail } from '@aws-sdk/client-batch';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { UsageError, systemClock, type Clock } from '../common';
import {
  TAG_BATCH_ATTEMPT,
  TAG_BATCH_ATTEMPTS,
  TAG_FLEET,
  creationToken,
  runIdOfJobDefinition,
} from '../contract';
import { findFileSystemByToken } from '../efs';
import { readCredit } from '../credit';
import { describeJobDefinition, SCRATCH_VOLUME_NAME } from './job-definition';
import { readFleetQueue } from './queue';
import { retryRunId } from './retry';
import { jobIdOfRun } from './run-job';
import type { BatchClients } from './run';

interface AttemptStatus {
  readonly attempt: number;
  readonly jobId: string;
  readonly state: string;
  readonly statusReason?: string;
  readonly runId?: string;
  /** The AZ ID of the job's queue (where its scratch is). */
  readonly zone?: string;
  readonly fileSystemId?: string;
  /** The file system still exists (the run is active, or its teardown has not happened yet). */
  readonly fileSystemExists: boolean;
  /** BurstCreditBalance (bytes), the latest minute CloudWatch has, while the file system exists. */
  readonly burstCreditBytes?: number;
}

export interface BatchJobStatus {
  readonly jobId: string;
  readonly jobName?: string;
  readonly fleet?: string;
  /** The state of the latest attempt: the job's state as a user sees it. */
  readonly state: string;
  readonly attempts: number;
  readonly attemptsAllowed: number;
  readonly history: readonly AttemptStatus[];
}

/** Looks the job up (a UsageError when Batch knows no such job) and follows its retries. */
export async function batchJobStatus(
  clients: BatchClients & { readonly cloudwatch: CloudWatchClient },
  jobId: string,
  options: { readonly clock?: Clock; readonly signal?: AbortSignal } = {},
): Promise<BatchJobStatus> {
  const clock = options.clock ?? systemClock;
  const first = await describeJob(clients, jobId, options.signal);
  if (first === undefined) {
    throw new UsageError(
      `job ${jobId}: Batch knows no such job (a job is described for 7 days after it ends): check the id and --region`,
    );
  }
  const fleet = first.tags?.[TAG_FLEET];
  const attemptsAllowed = Number(first.tags?.[TAG_BATCH_ATTEMPTS] ?? first.retryStrategy?.attempts ?? 1);
  const zone = first.jobQueue
    ? (await readFleetQueue(clients.batch, first.jobQueue, options.signal).catch(() => undefined))?.azId
    : undefined;
  const history: AttemptStatus[] = [];
  // The retries' jobs are found through the runs: attempt n+1's run id follows from attempt n's (retry.ts).
  let job: JobDetail | undefined = first;
  for (let attempt = Number(first.tags?.[TAG_BATCH_ATTEMPT] ?? 1); job !== undefined; attempt++) {
    const status = await attemptStatus(clients, job, { attempt, fleet, zone }, clock, options.signal);
    history.push(status);
    if (status.runId === undefined || fleet === undefined || attempt >= attemptsAllowed) break;
    const next = await jobIdOfRun(
      clients.batch,
      first.jobQueue!,
      fleet,
      retryRunId(status.runId),
      options.signal,
    );
    job = next === undefined ? undefined : await describeJob(clients, next, options.signal);
  }
  const latest = history[history.length - 1];
  return {
    jobId: first.jobId!,
    jobName: first.jobName,
    fleet,
    state: latest.state,
    attempts: history.length,
    attemptsAllowed,
    history,
  };
}

async function describeJob(
  clients: BatchClients,
  jobId: string,
  signal?: AbortSignal,
): Promise<JobDetail | undefined> {
  const out = await clients.batch.send(new DescribeJobsCommand({ jobs: [jobId] }), { abortSignal: signal });
  return out.jobs?.[0];
}

async function attemptStatus(
  clients: BatchClients & { readonly cloudwatch: CloudWatchClient },
  job: JobDetail,
  at: { readonly attempt: number; readonly fleet?: string; readonly zone?: string },
  clock: Clock,
  signal?: AbortSignal,
): Promise<AttemptStatus> {
  const { attempt, fleet, zone } = at;
  const runId = fleet && job.jobDefinition ? runIdOfJobDefinition(fleet, job.jobDefinition) : undefined;
  const base = {
    attempt,
    jobId: job.jobId!,
    state: job.status ?? 'UNKNOWN',
    statusReason: job.statusReason,
    zone,
  };
  if (runId === undefined || fleet === undefined) return { ...base, fileSystemExists: false };
  const revision = await describeJobDefinition(clients.batch, job.jobDefinition!, signal);
  const volume = revision?.containerProperties?.volumes?.find((v) => v.name === SCRATCH_VOLUME_NAME);
  const fs = await findFileSystemByToken(clients.efs, creationToken(fleet, runId), signal);
  const fileSystemId = fs?.FileSystemId ?? volume?.efsVolumeConfiguration?.fileSystemId;
  if (fs?.FileSystemId === undefined) return { ...base, runId, fileSystemId, fileSystemExists: false };
  const now = clock.now();
  const credit = await readCredit(clients.cloudwatch, fs.FileSystemId, now - 15 * 60_000, now, signal);
  return {
    ...base,
    runId,
    fileSystemId: fs.FileSystemId,
    fileSystemExists: true,
    burstCreditBytes: credit.balance.at(-1)?.value,
  };
}
