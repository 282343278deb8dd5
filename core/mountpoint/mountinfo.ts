/** Reading /proc/self/mountinfo: which mounts sit on a path, top-most last. */
import { readFileSync } from 'node:fs';

export interface MountEntry {
  readonly id: number;
  readonly parentId: number;
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly source: string;
}

const unescape = (s: string) =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export function readMountinfo(path = '/proc/self/mountinfo'): MountEntry[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pre, post] = line.split(' - ');
      const f = pre.split(' ');
      const [fsType, source] = (post ?? '').split(' ');
      return {
        id: Number(f[0]),
        parentId: Number(f[1]),
        root: unescape(f[3]),
        mountPoint: unescape(f[4]),
        fsType: fsType ?? '',
        source: unescape(source ?? ''),
      };
    });
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
