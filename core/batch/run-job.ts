/**
 * The job that runs a Batch run's revision: what `batch status` follows from one attempt to the next and what a
 * redelivered teardown event looks for before it makes a retry.
 */
import { ListJobsCommand, type BatchClient } from '@aws-sdk/client-batch';
import { runIdOfJobDefinition, runJobDefinitionName } from '../contract';

/** ListJobs pages read (100 jobs a page); a run has one job per attempt, so this is a bound, never reached. */
const MAX_LIST_PAGES = 20;

/**
 * The id of a job in `queueArn` that runs the run's revision, or undefined (not submitted, or no longer listed:
 * Batch keeps ended jobs listed for days). ListJobs filtered on the revision's name; the filter is applied here
 * too, on the summaries' jobDefinition, since the emulator ignores it.
 */
export async function jobIdOfRun(
  batch: BatchClient,
  queueArn: string,
  fleetId: string,
  runId: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const name = runJobDefinitionName(fleetId, runId);
  let nextToken: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const out = await batch.send(
      new ListJobsCommand({
        jobQueue: queueArn,
        filters: [{ name: 'JOB_DEFINITION', values: [name] }],
        nextToken,
      }),
      { abortSignal: signal },
    );
    const job = (out.jobSummaryList ?? []).find(
      (j) => runIdOfJobDefinition(fleetId, j.jobDefinition ?? '') === runId,
    );
    if (job?.jobId) return job.jobId;
    nextToken = out.nextToken;
    if (!nextToken) return undefined;
  }
  throw new Error(`ListJobs of ${queueArn} for ${name}: more than ${MAX_LIST_PAGES} pages`);
}
