/**
 * The tag contract on every scratch file system. These keys are the only thing the reaper and the
 * fleet's IAM policies key on: keep them stable.
 */
export const TAG_FLEET = 'mountfleet:fleet';
/** EC2 instance id of the instance that created the file system. */
export const TAG_OWNER_INSTANCE = 'mountfleet:owner-instance';
/** Job id: what the user called the job; several runs (re-runs, duplicates) may share it. */
export const TAG_JOB = 'mountfleet:job';
/**
 * Run id: the one `scratch run` that created the file system and alone may mount or delete it (also in the
 * CreationToken, so a retried create of the same run stays idempotent and no other run can ever match it).
 */
export const TAG_RUN = 'mountfleet:run';
/** Set by the reaper on its first idle sighting (two-phase delete on metric-only evidence). */
export const TAG_MARKED_IDLE_AT = 'mountfleet:marked-idle-at';

/**
 * Set by the agent when its teardown starts: the job is over. A file system still carrying it past the grace
 * period is a teardown that did not finish (its owner may well run on), and the reaper finishes it.
 */
export const TAG_TEARDOWN_STARTED_AT = 'mountfleet:teardown-started-at';

/** Tag keys the fleet may set on create (IAM `aws:TagKeys` allows exactly these plus `Name`). */
export const SCRATCH_CREATE_TAG_KEYS = [TAG_FLEET, TAG_OWNER_INSTANCE, TAG_JOB, TAG_RUN, 'Name'] as const;

/** Fleet ids appear in tags, CreationTokens, IAM conditions and resource names: keep them short and plain. */
export const FLEET_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/** Returns a message describing what is wrong with a fleet id, or undefined when it is valid. */
export function fleetIdProblem(fleetId: string): string | undefined {
  if (FLEET_ID_PATTERN.test(fleetId)) return undefined;
  return `fleet id "${fleetId}" must be 1-32 characters of lower-case letters, digits and hyphens, starting and ending with a letter or digit`;
}
