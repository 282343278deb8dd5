/**
 * The contract between the Batch constructs (lib/), `mountfleet batch submit|status` (agent/), the Batch
 * teardown handler (lambda/) and the reaper: tag keys on the fleet's job queues, job definitions and a Batch
 * run's scratch file system, and the names of the per-run job-definition revisions. Keep them stable.
 */
import { TAG_FLEET, TAG_JOB, TAG_RUN } from './tags';
import { RUN_ID_PATTERN } from './naming';

/** On a job queue: the AZ ID its compute environment runs in (scratch is One Zone: the run's file system goes there). */
export const TAG_BATCH_AZ_ID = 'mountfleet:az-id';
/** On a job queue: the subnet (in that zone) where a run's mount target is made. */
export const TAG_BATCH_SCRATCH_SUBNET = 'mountfleet:scratch-subnet';
/** On a job queue: the security group a run's mount target gets (NFS from the fleet's instances only). */
export const TAG_BATCH_SCRATCH_SECURITY_GROUP = 'mountfleet:scratch-security-group';
/**
 * On a job queue: the fleet's Mountpoint paths on the host, joined by ':' (tag values allow '/' and ':'; at
 * most 256 characters, checked at synth). A job definition used with the queue must bind each one read-only.
 */
export const TAG_BATCH_MOUNT_PATHS = 'mountfleet:mount-paths';
/** On a job definition made by the fleet's job-definition helper: the container path of the job's scratch. */
export const TAG_BATCH_SCRATCH_PATH = 'mountfleet:scratch-path';

/** On a Batch run's file system, from its creation: the name of the job queue the run was submitted to. */
export const TAG_BATCH_QUEUE = 'mountfleet:batch-queue';
/** On a Batch run's file system, once submitted: the Batch job id of the attempt that uses it. */
export const TAG_BATCH_JOB = 'mountfleet:batch-job';
/** On a Batch run's file system, once submitted: the attempt number (1-based) of this run within its job. */
export const TAG_BATCH_ATTEMPT = 'mountfleet:batch-attempt';
/** On a Batch run's file system, once submitted: the job id of attempt 1 (what `batch status` is asked about). */
export const TAG_BATCH_FIRST_JOB = 'mountfleet:batch-first-job';

/**
 * On a retry's file system, from its creation: a nonce of the teardown delivery that made it. Two deliveries of
 * one event race on the same CreationToken; the one whose nonce the file system carries goes on to register and
 * submit, the other stops (an SDK retry of the winner's own create finds its own nonce).
 */
export const TAG_BATCH_CLAIM = 'mountfleet:batch-claim';

/**
 * On a Batch run's job (SubmitJob tags, propagated to its ECS task) and on its job-definition revision: how many
 * attempts the job may have in all (`--attempts`, 1-10). Retries are new runs (a new file system and revision),
 * made by the teardown handler, so Batch's own retryStrategy of each run is 1 attempt.
 */
export const TAG_BATCH_ATTEMPTS = 'mountfleet:batch-attempts';

/**
 * Tag keys on a Batch run's job and its job-definition revision (IAM `aws:TagKeys` of SubmitJob and
 * RegisterJobDefinition): fleet and run, the attempt, the job's attempts and, from attempt 2 on, the first job's id.
 */
export const BATCH_RUN_TAG_KEYS = [
  TAG_FLEET,
  TAG_RUN,
  TAG_BATCH_ATTEMPT,
  TAG_BATCH_ATTEMPTS,
  TAG_BATCH_FIRST_JOB,
] as const;

/** Tag keys a Batch submit may set when it creates a run's file system (IAM `aws:TagKeys`). */
export const BATCH_SCRATCH_CREATE_TAG_KEYS = [
  TAG_FLEET,
  TAG_JOB,
  TAG_RUN,
  TAG_BATCH_QUEUE,
  TAG_BATCH_CLAIM,
  'Name',
] as const;
/** Tag keys a Batch submit (or the teardown's resubmission) may add once the job is submitted. */
export const BATCH_SCRATCH_SUBMIT_TAG_KEYS = [TAG_BATCH_JOB, TAG_BATCH_ATTEMPT, TAG_BATCH_FIRST_JOB] as const;

/** Every per-run job definition's name starts so (IAM resources `job-definition/mf-<fleet>-*`). */
export function runJobDefinitionPrefix(fleetId: string): string {
  return `mf-${fleetId}-`;
}

/**
 * The job-definition name of one Batch run: `mf-<fleet>-<run id>` (at most 3+32+1+32 = 68 of the 128 characters
 * Batch allows). One run, one revision: the teardown deregisters it with the file system.
 */
export function runJobDefinitionName(fleetId: string, runId: string): string {
  return runJobDefinitionPrefix(fleetId) + runId;
}

/** The run id in a per-run job-definition name or ARN of the fleet, or undefined for anything else. */
export function runIdOfJobDefinition(fleetId: string, nameOrArn: string): string | undefined {
  const name = nameOrArn.replace(/^arn:[^:]+:batch:[^:]*:\d{12}:job-definition\//, '').replace(/:\d+$/, '');
  const prefix = runJobDefinitionPrefix(fleetId);
  if (!name.startsWith(prefix)) return undefined;
  const runId = name.slice(prefix.length);
  return RUN_ID_PATTERN.test(runId) ? runId : undefined;
}

/** Batch job states in which a job may still use its file system (the reaper spares it). */
export const BATCH_ACTIVE_STATES = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING'] as const;
/** Batch job states that end an attempt: its file system is deleted. */
export const BATCH_FINAL_STATES = ['SUCCEEDED', 'FAILED'] as const;

/** The path a job's scratch has in its container unless the job definition says otherwise. */
export const DEFAULT_BATCH_SCRATCH_PATH = '/scratch';

/**
 * The per-run job-definition names of a fleet as an IAM resource pattern: `mf-<fleet>-` and the run id's exact
 * shape (`r` 8 digits `t` 6 digits `-` 16 hex), then `*` for the `:<revision>` of the ARN. `mf-<fleet>-*` would
 * also match the names of a fleet whose id starts with `<fleet>-` (fleet `train` would reach `train-dev`'s).
 */
export function runJobDefinitionIamPattern(fleetId: string): string {
  return `${runJobDefinitionPrefix(fleetId)}r${'?'.repeat(8)}t${'?'.repeat(6)}-${'?'.repeat(16)}*`;
}

/**
 * How long a Batch submit may take from its start to SubmitJob: it checks right before registering the run's
 * revision and again right before submitting, and past this it rolls back instead. So a file system that still
 * has no `mountfleet:batch-job` tag well after this (the reaper's bound adds a margin for clocks) belongs to a
 * submit that will never submit a job on it.
 */
export const BATCH_SUBMIT_LIMIT_MINUTES = 25;
