/**
 * Names of a scratch job's resources. The CreationToken is EFS's idempotency key: deriving it from
 * fleet + job means a retried CreateFileSystem, a restarted agent or a re-run of the same job finds the
 * file system it already made (409 FileSystemAlreadyExists) instead of making a second one.
 */
import { createHash, randomBytes } from 'node:crypto';

/** EFS CreationToken length limit. */
export const CREATION_TOKEN_MAX = 64;

/**
 * Job ids go into a tag value and the CreationToken: scheduler ids (Slurm numbers, AWS Batch UUIDs,
 * `array-job:7`) fit; '#' is excluded because the hashed token form uses it.
 */
export const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/=+@-]{0,127}$/;

/** Returns what is wrong with a job id, or undefined when it is valid. */
export function jobIdProblem(jobId: string): string | undefined {
  if (JOB_ID_PATTERN.test(jobId)) return undefined;
  return `job id "${jobId}" must be 1-128 characters of letters, digits and _ . : / = + @ -, starting with a letter or digit`;
}

/** A fresh job id such as `job-20261122t150644-3f9a2c`: sortable by start time, unique enough per fleet. */
export function generateJobId(now: number = Date.now(), random: () => Buffer = () => randomBytes(3)): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .toLowerCase();
  return `job-${stamp}-${random().toString('hex')}`;
}

/**
 * `mf/<fleet>/<job>` when it fits in 64 characters; otherwise `mf/<fleet>/#<hash>` with a hash of both
 * (a job id cannot contain '#', so the two forms never collide).
 */
export function creationToken(fleetId: string, jobId: string): string {
  const plain = creationTokenPrefix(fleetId) + jobId;
  if (plain.length <= CREATION_TOKEN_MAX) return plain;
  const hash = createHash('sha256').update(`${fleetId}\0${jobId}`).digest('hex');
  const prefix = `${creationTokenPrefix(fleetId)}#`;
  return prefix + hash.slice(0, CREATION_TOKEN_MAX - prefix.length);
}

/** How every CreationToken of the fleet's scratch begins (the reaper deletes nothing else). */
export function creationTokenPrefix(fleetId: string): string {
  return `mf/${fleetId}/`;
}

/** The `Name` tag shown in the console (tag values may be up to 256 characters). */
export function nameTag(fleetId: string, jobId: string): string {
  return `mountfleet-scratch-${fleetId}-${jobId}`.slice(0, 256);
}
