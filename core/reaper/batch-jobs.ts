/**
 * The Batch evidence behind decide.ts rule 4, read in batches and only for the file systems a decision asked it
 * for (a `batch-job` need):
 *
 * - a run tagged with its job (`mountfleet:batch-job`): DescribeJobs, 100 ids a call (its limit);
 * - a run its submit never tagged (rare: a submit that died, or whose tag write failed): ListJobs on its queue
 *   filtered on the run's job definition, alone.
 *
 * Every call is counted (the report's `batchLookups`). A failed call never turns into evidence: the file systems
 * it was asked about get `lookup-failed`, which keeps them.
 */
import type { BatchClient, JobSummary } from '@aws-sdk/client-batch';
import { errorText } from '../common';
import {
  BATCH_ACTIVE_STATES,
  TAG_BATCH_QUEUE,
  runIdOfJobDefinition,
  runJobDefinitionName,
} from '../contract';
import type { BatchJobEvidence, FileSystemFacts, Need } from './decide';
import { chunks } from './evidence';

const JOB_IDS_PER_CALL = 100;
/** ListJobs pages read for one untagged run (100 jobs a page): a run has one job per attempt. */
const MAX_LIST_PAGES = 20;
const ACTIVE_JOB_STATES: ReadonlySet<string> = new Set(BATCH_ACTIVE_STATES);

/** Batch calls one run made for evidence. */
export interface BatchLookups {
  describeJobs: number;
  listJobs: number;
}

type BatchSdk = typeof import('@aws-sdk/client-batch');
/** Loaded on use, as EC2's: most runs have no Batch file system to ask about. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const batchSdk = (): BatchSdk => require('@aws-sdk/client-batch') as BatchSdk;

/**
 * Evidence for each `batch-job` need: keyed by job id for a tagged run, by file system id for an untagged one
 * (as decideAll looks it up).
 */
export async function gatherBatchJobs(
  batch: BatchClient,
  fleetId: string,
  wants: ReadonlyArray<{ readonly fs: FileSystemFacts; readonly need: Extract<Need, { need: 'batch-job' }> }>,
  calls: BatchLookups,
): Promise<Map<string, BatchJobEvidence>> {
  const tagged = wants.flatMap(({ need }) => (need.jobId === undefined ? [] : [need.jobId]));
  const result = tagged.length > 0 ? await lookupBatchJobs(batch, tagged, calls) : new Map();
  for (const { fs, need } of wants) {
    if (need.jobId === undefined) result.set(fs.id, await lookupRunJobs(batch, fleetId, fs, calls));
  }
  return result;
}

/** What Batch says of each job id, 100 ids a DescribeJobs call; an id it does not return is `unknown`. */
async function lookupBatchJobs(
  batch: BatchClient,
  jobIds: readonly string[],
  calls: BatchLookups,
): Promise<Map<string, BatchJobEvidence>> {
  const { DescribeJobsCommand } = batchSdk();
  const result = new Map<string, BatchJobEvidence>();
  for (const ids of chunks([...new Set(jobIds)], JOB_IDS_PER_CALL)) {
    try {
      calls.describeJobs++;
      const out = await batch.send(new DescribeJobsCommand({ jobs: ids }));
      const jobs = new Map((out.jobs ?? []).map((job) => [job.jobId, job]));
      for (const id of ids) {
        const job = jobs.get(id);
        result.set(
          id,
          job === undefined
            ? { kind: 'unknown' }
            : { kind: 'known', jobId: id, status: job.status ?? 'unknown', stoppedAt: job.stoppedAt },
        );
      }
    } catch (err) {
      for (const id of ids) result.set(id, { kind: 'lookup-failed', error: errorText(err) });
    }
  }
  return result;
}

/**
 * The jobs of a Batch run its submit never tagged: ListJobs on the run's queue filtered on the run's job
 * definition (with a filter, ListJobs returns jobs in every state; the filter is applied here too, by the
 * summaries' jobDefinition). An active job answers first; else the last one ended; none is `unknown`.
 */
async function lookupRunJobs(
  batch: BatchClient,
  fleetId: string,
  fs: FileSystemFacts,
  calls: BatchLookups,
): Promise<BatchJobEvidence> {
  if (fs.batchQueue === undefined || fs.runId === undefined) {
    return { kind: 'lookup-failed', error: `no ${TAG_BATCH_QUEUE} or run tag to find its jobs by` };
  }
  const { ListJobsCommand } = batchSdk();
  const runId = fs.runId;
  const definition = runJobDefinitionName(fleetId, runId);
  const ofRun = (job: JobSummary) => runIdOfJobDefinition(fleetId, job.jobDefinition ?? '') === runId;
  const jobs: JobSummary[] = [];
  try {
    let nextToken: string | undefined;
    let pages = 0;
    do {
      if (pages++ === MAX_LIST_PAGES) {
        throw new Error(`ListJobs of ${fs.batchQueue} for ${definition}: more than ${MAX_LIST_PAGES} pages`);
      }
      calls.listJobs++;
      const page = await batch.send(
        new ListJobsCommand({
          jobQueue: fs.batchQueue,
          filters: [{ name: 'JOB_DEFINITION', values: [definition] }],
          nextToken,
        }),
      );
      jobs.push(...(page.jobSummaryList ?? []).filter(ofRun));
      nextToken = page.nextToken || undefined;
    } while (nextToken);
  } catch (err) {
    return { kind: 'lookup-failed', error: errorText(err) };
  }
  const job =
    jobs.find((j) => ACTIVE_JOB_STATES.has(j.status ?? '')) ??
    jobs.sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0))[0];
  return job === undefined
    ? { kind: 'unknown' }
    : { kind: 'known', jobId: job.jobId!, status: job.status ?? 'unknown', stoppedAt: job.stoppedAt };
}
