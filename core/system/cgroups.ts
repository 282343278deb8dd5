/**
 * The cgroup v2 tree, as the mount agent reads it to find a Batch host's job containers: where cgroup2 is mounted,
 * the leaf cgroups under a directory, their processes, and ending all of them at once.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMountinfo, type MountEntry } from './mountinfo';

/** Deeper than ECS's `ecstasks.slice/ecstasks-<task>.slice/docker-<id>.scope`; a bound on what a walk reads. */
const MAX_CGROUP_DEPTH = 6;

/**
 * Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup on Amazon Linux 2023, /sys/fs/cgroup/unified on a
 * hybrid host), or undefined without one. A cgroup2 mount hidden under a later one at a parent path shows in
 * mountinfo but not on the path, so the first whose cgroup.procs can be seen wins.
 */
export function cgroup2Root(entries: readonly MountEntry[] = readMountinfo()): string | undefined {
  return entries
    .filter((e) => e.fsType === 'cgroup2')
    .map((e) => e.mountPoint)
    .find((mountPoint) => existsSync(join(mountPoint, 'cgroup.procs')));
}

/** The cgroups under `dir` (not `dir` itself) that have no child cgroup, deepest MAX_CGROUP_DEPTH levels down. */
export function leafCgroups(dir: string, depth = 0): string[] {
  let children: string[];
  try {
    children = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return []; // gone meanwhile, or no such cgroup (no task has run yet)
  }
  if (depth >= MAX_CGROUP_DEPTH) return [];
  return children.flatMap((child) => {
    const below = leafCgroups(child, depth + 1);
    return below.length > 0 || hasChildCgroup(child) ? below : [child];
  });
}

function hasChildCgroup(dir: string): boolean {
  try {
    return readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory());
  } catch {
    return false;
  }
}

/** The processes in a cgroup (cgroup.procs, as pids of this PID namespace), or none when it is gone. */
export function cgroupMembers(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * SIGKILLs every process in a cgroup at once through cgroup.kill (Linux 5.14 and later), which also reaches a
 * process forked meanwhile; where there is no cgroup.kill, SIGKILL to each process of cgroup.procs.
 */
export function killCgroup(dir: string): 'cgroup.kill' | 'SIGKILL' {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return 'cgroup.kill';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  for (const pid of cgroupMembers(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return 'SIGKILL';
}
