/**
 * Facts about processes on this host, from the kernel: whether a pid exists and when it started (to
 * tell a live process from a reused pid). Shared by the mount agent's state and the scratch run registry.
 */
import { readFileSync } from 'node:fs';

/**
 * When a process started, in clock ticks since boot (/proc/PID/stat field 22), or undefined when there
 * is no such process. The command name (field 2) may hold spaces and parentheses, so fields are counted
 * from its closing parenthesis.
 */
export function processStartTime(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const ticks = Number(fields[19]);
  return Number.isSafeInteger(ticks) ? ticks : undefined;
}

/** True when a process with this pid exists (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
