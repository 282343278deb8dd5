/**
 * `mountfleet batch submit` on the submitter's side: the submitter may invoke the fleet's submit function and read
 * job state, nothing more (docs/design-decisions.md). The function is named by a tag on each of the fleet's job
 * queues; its answer is `submitted` (the result and the function's log lines) or `refused` (a UsageError here:
 * exit 2, nothing created); a failed invocation is a failure whose message is the function's error. A submitter
 * that stops waiting (its signal) ends with exit 130, saying how to find the job the function goes on to submit.
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { EXIT_STATUS, MountfleetError, UsageError, errorText } from '../common';
import {
  TAG_BATCH_SUBMIT_FUNCTION,
  generateJobId,
  type BatchSubmitAnswer,
  type BatchSubmitRequest,
  type BatchSubmitResult,
} from '../contract';
import { describeQueue } from './queue';

/** The function that submits to this queue, from the queue's tag; a UsageError naming `--queue` otherwise. */
async function submitFunctionOf(batch: BatchClient, queue: string, signal?: AbortSignal): Promise<string> {
  const q = await describeQueue(batch, queue, signal);
  const name = q.tags?.[TAG_BATCH_SUBMIT_FUNCTION];
  if (!name) {
    throw new UsageError(
      `--queue ${queue}: the queue carries no ${TAG_BATCH_SUBMIT_FUNCTION} tag: it is not the queue of a mountfleet ` +
        "Batch fleet (BatchComputeFleet tags its queues with the fleet's submit function); pass one of the fleet's queues",
    );
  }
  return name;
}

interface InvokeOptions {
  /** Stops waiting for the function (which goes on): a MountfleetError with exit 130 naming the job. */
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
}

type SubmitClients = { readonly batch: BatchClient; readonly lambda: LambdaClient };

/**
 * Invokes the queue's submit function with the request and turns its answer into a result or an error. The job
 * is named here when the request names none, so that a submit this caller stops waiting for can still be found.
 */
export async function submitThroughFunction(
  clients: SubmitClients,
  request: BatchSubmitRequest,
  options: InvokeOptions = {},
): Promise<BatchSubmitResult> {
  const named = { ...request, jobName: request.jobName ?? generateJobId() };
  try {
    return await invokeSubmitFunction(clients, named, options);
  } catch (err) {
    if (!options.signal?.aborted) throw err;
    throw new MountfleetError(
      `stopped waiting: the fleet's submit function either submits job ${named.jobName} or rolls back what it made; ` +
        `\`aws batch list-jobs --job-queue ${named.queue} --filters name=JOB_NAME,values=${named.jobName}\` finds it`,
      EXIT_STATUS.interrupted,
      { cause: err },
    );
  }
}

async function invokeSubmitFunction(
  clients: SubmitClients,
  request: BatchSubmitRequest & { readonly jobName: string },
  options: InvokeOptions,
): Promise<BatchSubmitResult> {
  const functionName = await submitFunctionOf(clients.batch, request.queue, options.signal);
  options.log?.(`asking ${functionName} to submit ${request.jobName}`);
  const out = await clients.lambda.send(
    new InvokeCommand({
      FunctionName: functionName,
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify(request)),
    }),
    { abortSignal: options.signal },
  );
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
  if (out.FunctionError) {
    throw new MountfleetError(`${functionName} failed: ${functionErrorMessage(text)}`, EXIT_STATUS.failure);
  }
  const answer = parseAnswer(functionName, text);
  if (answer.status === 'refused') throw new UsageError(answer.message);
  for (const line of answer.log) options.log?.(line);
  return answer.result;
}

/** Lambda's error document `{"errorType","errorMessage"}`, as one line. */
function functionErrorMessage(text: string): string {
  try {
    const e = JSON.parse(text) as { errorType?: unknown; errorMessage?: unknown };
    if (typeof e.errorMessage === 'string') {
      return typeof e.errorType === 'string' ? `${e.errorType}: ${e.errorMessage}` : e.errorMessage;
    }
  } catch {
    // not JSON: quoted as it came, below
  }
  return text.slice(0, 4096);
}

/** The function's answer, checked for the shape the contract gives it. */
function parseAnswer(functionName: string, text: string): BatchSubmitAnswer {
  let answer: Partial<BatchSubmitAnswer> & { result?: unknown; log?: unknown; message?: unknown };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch (err) {
    throw new MountfleetError(
      `${functionName} answered what is not JSON (${errorText(err)})`,
      EXIT_STATUS.failure,
    );
  }
  if (answer.status === 'refused' && typeof answer.message === 'string') return answer as BatchSubmitAnswer;
  const result = answer.result as Partial<BatchSubmitResult> | undefined;
  if (answer.status === 'submitted' && typeof result?.jobId === 'string' && Array.isArray(answer.log)) {
    return answer as BatchSubmitAnswer;
  }
  throw new MountfleetError(
    `${functionName} answered ${text.slice(0, 200)}: not a mountfleet submit function's answer (is the stack older than this CLI?)`,
    EXIT_STATUS.failure,
  );
}
