/**
 * What the fleet's submit function does for `mountfleet batch submit`: checks the request, the queue (one of the
 * fleet's) and the job definition (host-access.ts: nothing of the host beyond the fleet's Mountpoint paths,
 * read-only), then submits the job — with `scratch` as a run of its own (run.ts: its file system, its revision,
 * its job), without it as a plain SubmitJob of the checked revision with the command override. Refusals are
 * UsageErrors naming the flag, with nothing created.
 */
import { SubmitJobCommand } from '@aws-sdk/client-batch';
import { EXIT_STATUS, MountfleetError, errorText, systemClock, UsageError } from '../common';
import {
  TAG_FLEET,
  batchSubmitRequestSchema,
  formatIssues,
  generateJobId,
  generateRunId,
  type BatchSubmitAnswer,
  type BatchSubmitRequest,
  type BatchSubmitResult,
} from '../contract';
import { burstCreditPreflight } from '../credit';
import {
  readBaseJobDefinition,
  scratchPathOf,
  scratchProblem,
  type CheckedJobDefinition,
} from './job-definition';
import { readFleetQueue, scratchPlacement, type FleetQueue } from './queue';
import { BatchSubmitError, submitScratchRun, type BatchClients, type RunOptions } from './run';
import type { BatchFleetSettings } from './settings';

/** The request as the function received it (untrusted JSON), checked: a UsageError naming each bad field. */
export function parseSubmitRequest(payload: unknown): BatchSubmitRequest {
  const parsed = batchSubmitRequestSchema.safeParse(payload);
  if (!parsed.success) throw new UsageError(formatIssues(parsed.error, 'invalid batch submit request'));
  return parsed.data;
}

/**
 * Checks and submits; the refusals are UsageErrors naming the flag (nothing was created), a failure after the
 * file system exists is a BatchSubmitError after its rollback.
 */
export async function submitBatchJob(
  clients: BatchClients,
  settings: BatchFleetSettings,
  request: BatchSubmitRequest,
  options: RunOptions = {},
): Promise<BatchSubmitResult> {
  const clock = options.clock ?? systemClock;
  const jobName = request.jobName ?? generateJobId(clock.now());
  const queue = await fleetQueue(clients, settings, request.queue, options.signal);
  const base = await readBaseJobDefinition(clients.batch, request.jobDefinition, settings, options.signal);
  const common = { jobName, queue: queue.name, fleet: queue.fleetId, attempts: request.attempts };
  if (!request.scratch) {
    if (request.expectedIoBytes !== undefined)
      options.log?.('--expected-io is about scratch: ignored without --scratch');
    const jobId = await submitPlain(clients, queue, base, { ...request, jobName });
    return { ...common, jobId, jobDefinition: base.jobDefinitionArn };
  }
  return {
    ...common,
    ...(await submitWithScratch(clients, settings, queue, base, { ...request, jobName }, options)),
  };
}

/** The queue, which must be one of the fleet's (by ARN, and by its fleet tag). */
async function fleetQueue(
  clients: BatchClients,
  settings: BatchFleetSettings,
  ref: string,
  signal?: AbortSignal,
): Promise<FleetQueue> {
  const queue = await readFleetQueue(clients.batch, ref, signal);
  if (queue.fleetId !== settings.fleetId || !settings.queueArns.includes(queue.arn)) {
    throw new UsageError(
      `--queue ${ref}: not a job queue of fleet ${settings.fleetId} (it is ${queue.fleetId}'s): pass one of ` +
        `${settings.queueArns.join(', ')}`,
    );
  }
  return queue;
}

/** A plain SubmitJob of the checked revision (its ARN names the revision, which cannot change). */
async function submitPlain(
  clients: BatchClients,
  queue: FleetQueue,
  base: CheckedJobDefinition,
  request: BatchSubmitRequest & { readonly jobName: string },
): Promise<string> {
  const out = await clients.batch.send(
    new SubmitJobCommand({
      jobName: request.jobName,
      jobQueue: queue.arn,
      jobDefinition: base.jobDefinitionArn,
      containerOverrides: { command: [...request.command] },
      retryStrategy: { attempts: request.attempts },
      propagateTags: true,
      tags: { [TAG_FLEET]: queue.fleetId },
    }),
  );
  return out.jobId!;
}

/** The run's file system in the queue's zone, its revision and its job (run.ts). */
async function submitWithScratch(
  clients: BatchClients,
  settings: BatchFleetSettings,
  queue: FleetQueue,
  base: CheckedJobDefinition,
  request: BatchSubmitRequest & { readonly jobName: string },
  options: RunOptions,
): Promise<Pick<BatchSubmitResult, 'jobId' | 'jobDefinition' | 'scratch'>> {
  const clock = options.clock ?? systemClock;
  const path = scratchPathOf(base);
  const scratch = scratchProblem(base.containerProperties, path);
  if (scratch) throw new UsageError(`--job-definition ${request.jobDefinition}: ${scratch}`);
  const placement = await scratchPlacement(clients.ec2, queue, options.signal);
  if (request.expectedIoBytes !== undefined) {
    const verdict = burstCreditPreflight(request.expectedIoBytes, false);
    options.log?.(verdict.status === 'ok' ? verdict.message : `WARNING: ${verdict.message}`);
  }
  const run = await submitScratchRun(
    clients,
    {
      fleetId: settings.fleetId,
      queue,
      placement,
      base,
      scratchPath: path,
      runId: generateRunId(clock.now()),
      jobName: request.jobName,
      command: request.command,
      attempt: 1,
      attempts: request.attempts,
      kmsKeyId: settings.kmsKeyId,
    },
    options,
  );
  return {
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

/** How long the rollback of a stopped submit may take: the submit stops this long before the function must end. */
export const ROLLBACK_RESERVE_MS = 180_000;

/**
 * The submit function's work for one invocation: parses the (untrusted) request, submits with a stop at
 * `deadlineMs` (the function's remaining time less the rollback's reserve), and answers `submitted` with the log
 * lines, or `refused` for a UsageError (nothing was created). Any other failure is thrown: the invocation fails.
 */
export async function answerSubmitRequest(
  clients: BatchClients,
  settings: BatchFleetSettings,
  payload: unknown,
  options: {
    readonly remainingMs: number;
    readonly clock?: RunOptions['clock'];
    readonly log?: (line: string) => void;
  },
): Promise<BatchSubmitAnswer> {
  const lines: string[] = [];
  const log = (line: string) => {
    lines.push(line);
    options.log?.(line);
  };
  const signal = AbortSignal.timeout(Math.max(0, options.remainingMs - ROLLBACK_RESERVE_MS));
  try {
    const request = parseSubmitRequest(payload);
    const result = await submitBatchJob(clients, settings, request, { clock: options.clock, signal, log });
    return { status: 'submitted', result, log: lines };
  } catch (err) {
    if (err instanceof UsageError) return { status: 'refused', message: err.message };
    // Cut off in a read, before the run made anything (a run's own stop says what its rollback did).
    if (signal.aborted && !(err instanceof BatchSubmitError)) {
      throw new MountfleetError(
        `the submit function ran out of time before it made anything (${errorText(err)}); nothing was created`,
        EXIT_STATUS.interrupted,
        { cause: err },
      );
    }
    throw err;
  }
}
