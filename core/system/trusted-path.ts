/**
 * Paths that nobody but root can change. mountfleet runs as root and acts on a path some time after it
 * checked it: a scratch mount a minute of provisioning later, a Mountpoint restart, an unmount, a directory
 * removed at teardown. Were any parent directory writable by another user, that user could swap a component
 * for a symlink in between (`/home/u/scratch` → `/etc`) and the mount would land on whatever the link names.
 * Checking again right before acting only narrows that window; refusing such paths closes it: every
 * directory on the way is root's and closed to others (or sticky, like /tmp, with the next component
 * root's), so the path names the same directory for the whole run. The leaf itself may belong to anyone.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MountfleetError, withoutTrailingSlash } from '../common';

/** The uids whose directories are trusted: root, and this process's own (the same when it runs as root). */
function trustedUids(): ReadonlySet<number> {
  return new Set([0, process.geteuid?.() ?? 0]);
}

const S_ISVTX = 0o1000;
const GROUP_OR_OTHER_WRITABLE = 0o022;

/** The path's components from the root: `/a/b` → `['/', '/a', '/a/b']`. */
function components(path: string): string[] {
  const out: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    out.unshift(p);
    if (dirname(p) === p) return out;
  }
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

/**
 * What lets someone other than root change which directory `path` names, or undefined when nothing does.
 * The path must exist and contain no symlink (resolve it first). The message names the component and the fix.
 * `asParent`: directories will be created below `path`, so it must be closed to others like every parent.
 */
export function untrustedPathProblem(path: string, { asParent = false } = {}): string | undefined {
  const trusted = trustedUids();
  const parts = components(path);
  let parent: { path: string; stats: Stats } | undefined;
  for (const part of parts) {
    let stats: Stats;
    try {
      stats = lstatSync(part);
    } catch (err) {
      return `${part} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
    }
    if (stats.isSymbolicLink()) return `${part} is a symbolic link (give the path it resolves to)`;
    if (!stats.isDirectory()) return `${part} is not a directory`;
    if (parent && parent.stats.mode & S_ISVTX && !trusted.has(stats.uid)) {
      return (
        `${part} belongs to uid ${stats.uid} in the sticky directory ${parent.path}: that user can replace it ` +
        `with a symlink (to /etc, say) before mountfleet uses it; use a directory root owns`
      );
    }
    // The leaf may belong to anyone: only its parent can replace it.
    if (part === path && !asParent) return undefined;
    if (!trusted.has(stats.uid)) {
      return (
        `${part} belongs to uid ${stats.uid}: that user can replace what is below it with a symlink (to /etc, ` +
        `say) before mountfleet uses it; use a path whose parent directories only root can change, such as /mnt/scratch`
      );
    }
    if (stats.mode & GROUP_OR_OTHER_WRITABLE && !(stats.mode & S_ISVTX)) {
      return (
        `${part} is writable by other users (mode ${octal(stats.mode)}): they can replace what is below it ` +
        `with a symlink before mountfleet uses it; use a path whose parent directories only root can change ` +
        `(or chmod go-w ${part})`
      );
    }
    parent = { path: part, stats };
  }
  return undefined;
}

/**
 * untrustedPathProblem for a path that may not exist yet: its deepest existing directory must be one only
 * root can change (the rest will be made by root below it).
 */
export function untrustedPathProblemBeforeCreating(path: string): string | undefined {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  return untrustedPathProblem(existing, { asParent: existing !== path });
}

/**
 * The absolute path with every symlink in its existing part resolved (the rest, not created yet, kept as
 * given), so `/mnt/x` → `/etc` is seen as `/etc` before anything is mounted there.
 */
export function realMountPath(path: string): string {
  const absolute = withoutTrailingSlash(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realMountPath(parent), basename(absolute));
  }
}

/**
 * For a path used as configured (agent.json's mount paths go into unit files as written): the directories it
 * resolves to must be ones only root can change, and so must every directory holding a symlink on the way
 * (whoever can replace the link re-points the path). A symlink in a sticky directory must be root's.
 */
export function untrustedConfiguredPathProblem(path: string): string | undefined {
  const resolved = untrustedPathProblemBeforeCreating(realMountPath(path));
  if (resolved) return resolved;
  const trusted = trustedUids();
  for (const part of components(withoutTrailingSlash(path))) {
    let stats: Stats;
    try {
      stats = lstatSync(part);
    } catch {
      return undefined; // not made yet: created by root below a checked directory
    }
    if (!stats.isSymbolicLink()) continue;
    const holder = realMountPath(dirname(part));
    const problem = untrustedPathProblem(holder, { asParent: true });
    if (problem) return `the symlink ${part} is in a directory others can change: ${problem}`;
    if (lstatSync(holder).mode & S_ISVTX && !trusted.has(stats.uid)) {
      return `the symlink ${part} belongs to uid ${stats.uid} in the sticky directory ${holder}: that user can re-point it; use a directory root owns`;
    }
  }
  return undefined;
}

/**
 * For a configured path that is a mount point of mountfleet's own (a user path the path switcher has stacked binds
 * on): the path itself may not answer (the Mountpoint process under its top bind died: ENOTCONN), and only its
 * parent can re-point it (a mount point is no symlink: mounting resolves the path), so the parent is checked as one.
 */
export function untrustedMountPointProblem(path: string): string | undefined {
  const parent = dirname(withoutTrailingSlash(path));
  return (
    untrustedConfiguredPathProblem(parent) ?? untrustedPathProblem(realMountPath(parent), { asParent: true })
  );
}

/**
 * A directory checked by untrustedPathProblem and held open, so that "the same directory" can be asked again
 * right before acting (a held descriptor keeps its inode number from being reused).
 */
export interface CheckedDirectory {
  readonly path: string;
  /** Undefined while the path still names the checked directory through trusted parents; else what changed. */
  changed(): string | undefined;
  /** Closes the descriptor. */
  release(): void;
}

/**
 * Checks `path` (an existing, resolved directory) and holds it; when it is not (or no longer) a directory only
 * root can re-point, throws a MountfleetError saying why and what to do.
 */
export function holdCheckedDirectory(path: string): CheckedDirectory {
  const problem = untrustedPathProblem(path);
  if (problem) throw new MountfleetError(problem);
  let fd: number;
  try {
    // O_NOFOLLOW: a leaf swapped for a symlink since the check is refused, not followed.
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new MountfleetError(`${path} changed while it was checked (${(err as Error).message})`);
  }
  const held = fstatSync(fd);
  // What the descriptor names now: a parent swapped between the check and the open shows here.
  const opened = readlinkSync(join('/proc/self/fd', String(fd)));
  if (opened !== path) {
    closeSync(fd);
    throw new MountfleetError(`${path} changed while it was checked (it led to ${opened})`);
  }
  let open = true;
  return {
    path,
    changed() {
      const now = untrustedPathProblem(path);
      if (now) return now;
      const stats = lstatSync(path);
      if (stats.dev !== held.dev || stats.ino !== held.ino) {
        return `${path} is no longer the directory that was checked (replaced since)`;
      }
      return undefined;
    },
    release() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
