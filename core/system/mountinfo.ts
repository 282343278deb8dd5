/**
 * Reading /proc/self/mountinfo: which mounts sit on a path, top-most last. Shared by the Mountpoint
 * agent (its mounts, binds and cache volume) and scratch runs (the EFS mount they made).
 */
import { readFileSync } from 'node:fs';

export interface MountEntry {
  readonly id: number;
  readonly parentId: number;
  /** `major:minor` of the file system: a new FUSE connection gets a new one while the old is referenced. */
  readonly device: string;
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly source: string;
}

const unescape = (s: string) =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export function readMountinfo(path = '/proc/self/mountinfo'): MountEntry[] {
  return parseMountinfo(readFileSync(path, 'utf8'));
}

/** The lines of a mountinfo file (proc_pid_mountinfo(5)), in order. */
export function parseMountinfo(text: string): MountEntry[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pre, post] = line.split(' - ');
      const f = pre.split(' ');
      const [fsType, source] = (post ?? '').split(' ');
      return {
        id: Number(f[0]),
        parentId: Number(f[1]),
        device: f[2],
        root: unescape(f[3]),
        mountPoint: unescape(f[4]),
        fsType: fsType ?? '',
        source: unescape(source ?? ''),
      };
    });
}

/** True when something is mounted exactly at `path` (in this process's mount namespace). */
export function isMountPoint(path: string, entries: readonly MountEntry[] = readMountinfo()): boolean {
  const target = path.replace(/\/+$/, '') || '/';
  return entries.some((e) => e.mountPoint === target);
}

/** The mounts stacked on `path`, bottom first (each later one's parent is the one before). */
export function mountStack(path: string, entries: readonly MountEntry[] = readMountinfo()): MountEntry[] {
  const target = path.replace(/\/+$/, '') || '/';
  const here = entries.filter((e) => e.mountPoint === target);
  const ids = new Set(here.map((e) => e.id));
  const stack: MountEntry[] = [];
  let current = here.find((e) => !ids.has(e.parentId));
  while (current) {
    stack.push(current);
    const parent: MountEntry = current;
    current = here.find((e) => e.parentId === parent.id);
  }
  return stack;
}

/** The top-most mount on `path`, if any. */
export function topMount(path: string, entries?: readonly MountEntry[]): MountEntry | undefined {
  return mountStack(path, entries).at(-1);
}

/**
 * True when both describe the same mount. The kernel reuses a mount ID once its mount is gone, so a
 * restarted process can get its predecessor's ID: the device and source must match as well.
 */
export function sameMount(a: MountEntry, b: MountEntry): boolean {
  return (
    a.id === b.id &&
    a.parentId === b.parentId &&
    a.device === b.device &&
    a.fsType === b.fsType &&
    a.source === b.source
  );
}

/** The mount that holds `path` (an absolute, resolved path): the top-most one on the longest mount point above it. */
export function mountHolding(
  path: string,
  entries: readonly MountEntry[] = readMountinfo(),
): MountEntry | undefined {
  let best: string | undefined;
  for (const e of entries) {
    const inside = e.mountPoint === '/' || path === e.mountPoint || path.startsWith(`${e.mountPoint}/`);
    if (inside && (best === undefined || e.mountPoint.length > best.length)) best = e.mountPoint;
  }
  return best === undefined ? undefined : topMount(best, entries);
}
