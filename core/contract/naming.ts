/**
 * Names of a run's resources. One run, one file system: every `scratch run` (and every Batch run with scratch)
 * draws a run id of its own, and the CreationToken (EFS's idempotency key, creation-token.ts) and a Batch run's
 * job-definition name (batch.ts) are derived from fleet + run id. A retried
 * CreateFileSystem of the same run finds the file system it already made (409 FileSystemAlreadyExists);
 * another run — a re-run of the job after a crash, the same job id on another instance or in another
 * container — can never match it, so it can never mount, adopt or delete it.
 */
import { randomBytes } from 'node:crypto';

/**
 * Job ids go into a tag value: scheduler ids (Slurm numbers, AWS Batch UUIDs, `array-job:7`) fit; '#' is
 * excluded because the hashed token form uses it.
 */
const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/=+@-]{0,127}$/;

/** Returns what is wrong with a job id, or undefined when it is valid. */
export function jobIdProblem(jobId: string): string | undefined {
  if (JOB_ID_PATTERN.test(jobId)) return undefined;
  return `job id "${jobId}" must be 1-128 characters of letters, digits and _ . : / = + @ -, starting with a letter or digit`;
}

/** `20261122t150644`: a sortable UTC stamp for generated ids. */
function stamp(now: number): string {
  return new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .toLowerCase();
}

/** A fresh job id such as `job-20261122t150644-3f9a2c`: sortable by start time, unique enough per fleet. */
export function generateJobId(now: number = Date.now(), random: () => Buffer = () => randomBytes(3)): string {
  return `job-${stamp(now)}-${random().toString('hex')}`;
}

/** Run ids: `r` + UTC stamp + 64 random bits, e.g. `r20261122t150644-9c1e0f7a2b3d4e5f` (32 characters). */
export const RUN_ID_PATTERN = /^r\d{8}t\d{6}-[0-9a-f]{16}$/;

/** A run id no other run will ever draw (64 random bits), sortable by start time. */
export function generateRunId(now: number = Date.now(), random: () => Buffer = () => randomBytes(8)): string {
  return `r${stamp(now)}-${random().toString('hex')}`;
}
