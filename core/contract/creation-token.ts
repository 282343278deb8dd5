/**
 * The CreationToken of a scratch file system (EFS's idempotency key): `mf/<fleet>/<run id>`. Part of the
 * contract between a scratch run, which creates with it, and the reaper and `scratch list`, which treat a
 * file system with the fleet tag but another token as foreign and never delete it.
 */
import { createHash } from 'node:crypto';

/** EFS CreationToken length limit. */
export const CREATION_TOKEN_MAX = 64;

/**
 * `mf/<fleet>/<run>` when it fits in 64 characters (it does for every valid fleet id); otherwise
 * `mf/<fleet>/#<hash>` with a hash of both.
 */
export function creationToken(fleetId: string, runId: string): string {
  const plain = creationTokenPrefix(fleetId) + runId;
  if (plain.length <= CREATION_TOKEN_MAX) return plain;
  const hash = createHash('sha256').update(`${fleetId}\0${runId}`).digest('hex');
  const prefix = `${creationTokenPrefix(fleetId)}#`;
  return prefix + hash.slice(0, CREATION_TOKEN_MAX - prefix.length);
}

/** How every CreationToken of the fleet's scratch begins (the reaper deletes nothing else). */
export function creationTokenPrefix(fleetId: string): string {
  return `mf/${fleetId}/`;
}
