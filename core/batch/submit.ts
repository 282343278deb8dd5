/**
 * `mountfleet batch submit`: checks the queue and the job definition against the fleet's contract, then
 * submits the job — with `--scratch` as a run of its own (run.ts: its file system, its revision, its job),
 * without it as a plain SubmitJob of the job definition with the command override.
 */
import { SubmitJobCommand } from '@aws-sdk/client-batch';
import { systemClock, UsageError } from '../common';
import { TAG_FLEET } from '../contract';
import { burstCreditPreflight, generateJobId, generateRunId } from '../scratch';
import { mountsProblem, readBaseJobDefinition, scratchPathOf, scratchProblem } from './job-definition';
import { readFleetQueue, scratchPlacement } from './queue';
import { submitScratchRun, type BatchClients, type RunOptions } from './run';

/** `batch submit` as its flags ask for it (agent/commands/batch-submit.ts reads and checks each one). */
export interface BatchSubmitRequest {
  readonly queue: string;
  readonly jobDefinition: string;
  /** CMD and its arguments: the container's command override. */
  readonly command: readonly string[];
  readonly scratch: boolean;
  readonly expectedIoBytes?: number;
  /** Attempts in all, 1-10: with scratch each retry is a new run the teardown makes; without, Batch's own. */
  readonly attempts: number;
  /** A name is generated (`job-<stamp>-<hex>`) when unset. */
  readonly jobName?: string;
}

export interface BatchSubmitResult {
  readonly jobId: string;
  readonly jobName: string;
  readonly queue: string;
  readonly fleet: string;
  /** The job definition the job runs: the run's revision with scratch, else the one given. */
  readonly jobDefinition: string;
  readonly attempts: number;
  readonly scratch?: {
    readonly runId: string;
    readonly fileSystemId: string;
    readonly availabilityZone: string;
    readonly path: string;
  };
}

/** Batch's job-name rule: up to 128 letters, digits, hyphens and underscores, starting with a letter or digit. */
const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** What is wrong with a `--job-name`, or undefined. */
function jobNameProblem(name: string): string | undefined {
  return JOB_NAME.test(name)
    ? undefined
    : `--job-name ${name}: 1-128 letters, digits, hyphens and underscores, starting with a letter or digit (Batch's rule)`;
}

/**
 * Checks and submits; the refusals are UsageErrors naming the flag (nothing was created), a failure after the
 * file system exists is a BatchSubmitError after its rollback.
 */
export async function submitBatchJob(
  clients: BatchClients,
  request: BatchSubmitRequest,
  options: RunOptions = {},
): Promise<BatchSubmitResult> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const jobName = request.jobName ?? generateJobId(clock.now());
  const nameProblem = jobNameProblem(jobName);
  if (nameProblem) throw new UsageError(nameProblem);
  const queue = await readFleetQueue(clients.batch, request.queue, options.signal);
  const base = await readBaseJobDefinition(
    clients.batch,
    request.jobDefinition,
    queue.fleetId,
    options.signal,
  );
  const mounts = mountsProblem(base.containerProperties, queue.mountPaths);
  if (mounts) throw new UsageError(`--job-definition ${request.jobDefinition}: ${mounts}`);
  const common = { jobName, queue: queue.name, fleet: queue.fleetId, attempts: request.attempts };
  if (!request.scratch) {
    // The fleet's submit role may SubmitJob only job definitions with the fleet's tag (a run's revision is the
    // other kind); say so before IAM refuses it less clearly.
    if (base.tags?.[TAG_FLEET] !== queue.fleetId) {
      throw new UsageError(
        `--job-definition ${request.jobDefinition}: not tagged ${TAG_FLEET}=${queue.fleetId} (it has ` +
          `${base.tags?.[TAG_FLEET] ?? 'no such tag'}); the fleet's submit role may submit only the fleet's job ` +
          `definitions: define it with FleetJobDefinition, or tag it (\`aws batch tag-resource --resource-arn ` +
          `${base.jobDefinitionArn} --tags ${TAG_FLEET}=${queue.fleetId}\`)`,
      );
    }
    if (request.expectedIoBytes !== undefined)
      log('--expected-io is about scratch: ignored without --scratch');
    const out = await clients.batch.send(
      new SubmitJobCommand({
        jobName,
        jobQueue: queue.arn,
        jobDefinition: base.jobDefinitionArn,
        containerOverrides: { command: [...request.command] },
        retryStrategy: { attempts: request.attempts },
        propagateTags: true,
        tags: { [TAG_FLEET]: queue.fleetId },
      }),
    );
    return { ...common, jobId: out.jobId!, jobDefinition: base.jobDefinitionArn! };
  }
  const path = scratchPathOf(base);
  const scratch = scratchProblem(base.containerProperties, path);
  if (scratch) throw new UsageError(`--job-definition ${request.jobDefinition}: ${scratch}`);
  const placement = await scratchPlacement(clients.ec2, queue, options.signal);
  if (request.expectedIoBytes !== undefined) {
    const verdict = burstCreditPreflight(request.expectedIoBytes, false);
    log(verdict.status === 'ok' ? verdict.message : `WARNING: ${verdict.message}`);
  }
  const run = await submitScratchRun(
    clients,
    {
      fleetId: queue.fleetId,
      queue,
      placement,
      base,
      scratchPath: path,
      runId: generateRunId(clock.now()),
      jobName,
      command: request.command,
      attempt: 1,
      attempts: request.attempts,
    },
    options,
  );
  return {
    ...common,
    jobId: run.jobId,
    jobDefinition: run.jobDefinitionArn,
    scratch: {
      runId: run.runId,
      fileSystemId: run.fileSystemId,
      availabilityZone: placement.availabilityZoneName,
      path,
    },
  };
}
