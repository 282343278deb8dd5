/**
 * One `mountfleet up` per run dir: the state file that `status` and `down` rely on, and the mounts it
 * records, belong to the one agent that holds `<run dir>/agent.lock` (flock, core/system/lock.ts). A second
 * `up` with the same run dir — a second `up --supervise` in the same container, a unit started twice —
 * refuses at once (exit 75, holder named) instead of stacking a second set of mounts and overwriting the
 * state file. The lock is held until the process ends, however it ends.
 */
import { join } from 'node:path';
import { InUseError } from '../common';
import { makeDirectories, acquireLock, lockFileError } from '../system';

/**
 * Takes the run dir's agent lock for the rest of this process's life; when another `mountfleet up` holds it,
 * throws an InUseError (exit 75) naming the holder and what to do.
 */
export async function holdAgentRunDir(runDir: string, configFile: string | undefined): Promise<void> {
  try {
    makeDirectories(runDir, 0o755);
  } catch (err) {
    throw lockFileError(runDir, err);
  }
  const file = join(runDir, 'agent.lock');
  const holder = { pid: process.pid, startedAt: new Date().toISOString(), config: configFile ?? '(default)' };
  const lock = await acquireLock(file, { holder: JSON.stringify(holder), waitSeconds: 0 });
  if (lock.status === 'held') return; // released when the process exits
  let who = 'another mountfleet up (starting up)';
  try {
    const h = JSON.parse(lock.holder) as typeof holder;
    who = `mountfleet up pid ${h.pid} (since ${h.startedAt}, config ${h.config})`;
  } catch {
    // the holder is still writing its record
  }
  throw new InUseError(
    `refusing: ${runDir} is in use by ${who}: run \`mountfleet down\` first, or give this agent its own MOUNTFLEET_RUN_DIR`,
  );
}
