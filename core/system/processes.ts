/**
 * Facts about processes on this host, from the kernel: whether a pid exists, when it started (to tell a
 * live process from a reused pid), which processes are left in a process group. Shared by the mount
 * agent's state, the scratch run registry and the scratch job's supervision.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The fields of /proc/PID/stat from field 3 (state) on, or undefined when there is no such process. The
 * command name (field 2) may hold spaces and parentheses, so fields are counted from its closing parenthesis.
 */
function statFields(pid: number | string): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** When a process started, in clock ticks since boot (/proc/PID/stat field 22), or undefined when there is none. */
export function processStartTime(pid: number): number | undefined {
  const fields = statFields(pid);
  if (fields === undefined) return undefined;
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const ticks = Number(fields[19]);
  return Number.isSafeInteger(ticks) ? ticks : undefined;
}

/** A process's parent pid (/proc/PID/stat field 4), or undefined when there is no such process. */
export function parentPid(pid: number): number | undefined {
  const ppid = Number(statFields(pid)?.[1]);
  return Number.isSafeInteger(ppid) ? ppid : undefined;
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

/**
 * The live members of process group `pgid`, from /proc. Not `kill(-pgid, 0)`: an orphan that died is a
 * zombie until something reaps it, and in a container PID 1 may never do so.
 */
export function processGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(name);
    if (fields === undefined) continue; // gone meanwhile
    // state ppid pgrp ...
    const [state, , pgrp] = fields;
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') members.push(Number(name));
  }
  return members;
}

/**
 * The live processes whose control group ends in `/<unit>` (a systemd scope or service), from /proc/PID/cgroup
 * in any hierarchy: processes stay in their cgroup after `setsid`, which takes them out of a process group.
 */
export function controlGroupMembers(unit: string): number[] {
  const suffix = `/${unit}`;
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cgroups: string;
    try {
      cgroups = readFileSync(`/proc/${name}/cgroup`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (!cgroups.split('\n').some((line) => line.endsWith(suffix))) continue;
    const state = statFields(name)?.[0];
    if (state !== undefined && state !== 'Z' && state !== 'X') members.push(Number(name));
  }
  return members;
}
