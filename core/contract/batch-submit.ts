/**
 * The contract of a Batch fleet's submit function: what `mountfleet batch submit` sends it and gets back, how it
 * is found (a tag on each of the fleet's job queues), and the environment both Batch functions (submit and
 * teardown) read. The submitter may only invoke the function and read job state; the function checks the job
 * definition against the fleet (core/batch/host-access.ts) and makes the run (docs/design-decisions.md).
 */
import { z } from 'zod';

/** On each of a fleet's job queues: the name of the fleet's submit function. */
export const TAG_BATCH_SUBMIT_FUNCTION = 'mountfleet:submit-function';

/**
 * The submit function's name: fixed by the fleet id (at most 11+32+13 = 56 of Lambda's 64 characters), so the
 * queues can carry it without depending on the function (whose policy depends on the queues).
 */
export function submitFunctionName(fleetId: string): string {
  return `mountfleet-${fleetId}-batch-submit`;
}

/** The submit function's timeout (Lambda's longest): making a run's file system and mount target takes minutes. */
export const SUBMIT_FUNCTION_TIMEOUT_MINUTES = 15;

/** Environment of the fleet's Batch functions (lib/ sets them, lambda/ reads them). */
export const BATCH_FUNCTION_ENV = {
  /** The fleet id: the functions touch file systems, job definitions and jobs of this fleet only. */
  fleetId: 'FLEET_ID',
  /** The fleet's job-queue ARNs, comma-separated: the only queues a job goes to; other queues' events are ignored. */
  queueArns: 'BATCH_QUEUE_ARNS',
  /** The fleet's Mountpoint paths, colon-separated: the only host paths a job may bind (read-only). */
  mountPaths: 'MOUNT_PATHS',
  /** The fleet's job role: the only role a job may run as. */
  jobRoleArn: 'JOB_ROLE_ARN',
  /** The fleet's scratch KMS key (its ARN); unset: the AWS managed key for EFS. */
  kmsKeyId: 'SCRATCH_KMS_KEY_ID',
} as const;

/** Batch's job-name rule: up to 128 letters, digits, hyphens and underscores, starting with a letter or digit. */
export const JOB_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Bounds on what a request may carry (the function decodes it within them). */
const MAX_ARGS = 1000;
const MAX_ARG_CHARS = 16_384;
const MAX_REF_CHARS = 2048;

/** What `mountfleet batch submit` asks the function for (its flags, checked again here: the function trusts no caller). */
export const batchSubmitRequestSchema = z
  .object({
    /** The fleet's job queue, name or ARN. */
    queue: z.string().min(1).max(MAX_REF_CHARS),
    /** The job definition the job runs (name, name:revision or ARN); the function checks it against the fleet. */
    jobDefinition: z.string().min(1).max(MAX_REF_CHARS),
    /** CMD and its arguments: the container's command override. */
    command: z.array(z.string().max(MAX_ARG_CHARS)).min(1).max(MAX_ARGS),
    /** Give the run an EFS One Zone file system of its own. */
    scratch: z.boolean(),
    /** Attempts in all: with scratch each retry is a new run the teardown makes; without, Batch's own. */
    attempts: z.number().int().min(1).max(10),
    /** A name is generated (`job-<stamp>-<hex>`) when unset. */
    jobName: z
      .string()
      .regex(
        JOB_NAME_PATTERN,
        "1-128 letters, digits, hyphens and underscores, starting with a letter or digit (Batch's rule)",
      )
      .optional(),
    /** Bytes the job will read and write on its scratch: checked against the burst credit. */
    expectedIoBytes: z.number().int().min(0).optional(),
  })
  .strict();

export type BatchSubmitRequest = z.infer<typeof batchSubmitRequestSchema>;

/** What a submit made. */
export interface BatchSubmitResult {
  readonly jobId: string;
  readonly jobName: string;
  readonly queue: string;
  readonly fleet: string;
  /** The job definition the job runs: the run's revision with scratch, else the (checked) one given. */
  readonly jobDefinition: string;
  readonly attempts: number;
  readonly scratch?: {
    readonly runId: string;
    readonly fileSystemId: string;
    readonly availabilityZone: string;
    readonly path: string;
  };
}

/**
 * The function's answer: `submitted`, or `refused` (nothing was created: the message names the field or flag and
 * the fix; the CLI exits 2). A failure after something was made is the invocation's error (its message says what
 * the rollback did), so it counts in the function's error metrics.
 */
export type BatchSubmitAnswer =
  | {
      readonly status: 'submitted';
      readonly result: BatchSubmitResult;
      /** Progress and warnings the submit logged, for the CLI to show. */
      readonly log: readonly string[];
    }
  | { readonly status: 'refused'; readonly message: string };
