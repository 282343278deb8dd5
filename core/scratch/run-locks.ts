/**
 * What one `scratch run` holds on its instance for its whole life: its job id (within its fleet) and its
 * mount path. Neither is what keeps scratch safe — every run has a file system of its own (core/contract/naming.ts) — but
 * both refuse an accidental duplicate early and clearly: a second run of the same job id, a second run on
 * the same path (it would stack its mount on the first's), and a run on a path inside, or containing,
 * another run's path (one run's unmount would take the other's mount with it). Refused before anything is
 * created (exit 75, holder named), or waited for when asked (`--wait-lock`).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { acquireLock, lockFileError, type HeldLock, makeDirectories } from '../system';
import { InUseError } from '../common';

interface RunLockRequest {
  /** MOUNTFLEET_RUN_DIR (/run/mountfleet by default): the locks are files under `scratch-locks/`. */
  readonly runDir: string;
  readonly fleetId: string;
  readonly jobId: string;
  /** The mount path, already resolved (local-setup.ts realMountPath): nesting is checked on it. */
  readonly path: string;
  /** Wait this long for a lock another run holds; 0 refuses at once; undefined waits without limit. */
  readonly waitSeconds?: number;
  readonly signal?: AbortSignal;
}

/** The locks a run holds; `fds` are their descriptors (runner-watch.ts hands them on to the watcher). */
export interface HeldRunLocks {
  readonly fds: readonly number[];
  release(): void;
}

interface Holder {
  readonly pid: number;
  readonly fleetId: string;
  readonly jobId: string;
  readonly path: string;
  readonly startedAt: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

function describeHolder(text: string): string {
  try {
    const h = JSON.parse(text) as Holder;
    return `job ${h.jobId} at ${h.path} (pid ${h.pid}, since ${h.startedAt})`;
  } catch {
    return 'another run (starting up)';
  }
}

/** True when one path is the other or lies inside it. */
function pathsNest(a: string, b: string): boolean {
  const inside = (inner: string, outer: string) =>
    inner === outer || inner.startsWith(outer === sep ? sep : outer + sep);
  return inside(a, b) || inside(b, a);
}

/** How long a run waits for another run's scan of the path registry (a few flock calls) to finish. */
const REGISTRY_WAIT_SECONDS = 30;

/**
 * Another run's held path lock whose path nests with `path` (file and holder), if any. A path lock file
 * nobody holds is a finished run's: probing it takes and releases it at once.
 */
async function nestedHolder(dir: string, path: string, ownFile: string, signal?: AbortSignal) {
  for (const name of readdirSync(dir)) {
    if (!/^path-[0-9a-f]+\.lock$/.test(name) || name === ownFile) continue;
    const file = join(dir, name);
    let holder: Holder;
    try {
      holder = JSON.parse(readFileSync(file, 'utf8')) as Holder;
    } catch {
      continue; // empty: never held, or a run is writing it (it holds the registry lock until it has)
    }
    if (!pathsNest(holder.path, path)) continue;
    const probe = await acquireLock(file, { holder: '', waitSeconds: 0, signal });
    if (probe.status === 'held') probe.release();
    else return { file, holder: describeHolder(probe.holder) };
  }
  return undefined;
}

/**
 * Takes the job lock, then (under the registry lock) checks that no other run's path nests with this one
 * and takes the path lock; returns what releases them. Throws InUseError naming the holder when one
 * is taken and the wait is over. Always in that order, so two runs cannot deadlock.
 */
export async function holdJobAndPath(request: RunLockRequest): Promise<HeldRunLocks> {
  const dir = scratchLockDirectory(request.runDir);
  const { path } = request;
  const holder: Holder = {
    pid: process.pid,
    fleetId: request.fleetId,
    jobId: request.jobId,
    path,
    startedAt: new Date().toISOString(),
  };
  const options = {
    holder: JSON.stringify(holder),
    waitSeconds: request.waitSeconds,
    signal: request.signal,
  };

  const job = await acquireLock(
    join(dir, `job-${digest(`${request.fleetId}\n${request.jobId}`)}.lock`),
    options,
  );
  if (job.status === 'busy') {
    throw new InUseError(
      `job ${request.jobId} of fleet ${request.fleetId} is already running on this instance: ` +
        `held by ${describeHolder(job.holder)}; wait for it to end, or use another --job`,
    );
  }
  let pathLock: HeldLock;
  try {
    pathLock = await holdPath(dir, path, options);
  } catch (err) {
    job.release();
    throw err;
  }
  return {
    fds: [job.fd, pathLock.fd],
    release() {
      pathLock.release();
      job.release();
    },
  };
}

/**
 * The path lock, taken only while no other run's path nests with this one. The check and the take happen
 * under the registry lock, which every run holds for just that, so no two runs can pass each other; a
 * wait (`--wait-lock`) happens outside it, on the lock of the run in the way, then the check is made again.
 */
async function holdPath(
  dir: string,
  path: string,
  options: { holder: string; waitSeconds?: number; signal?: AbortSignal },
): Promise<HeldLock> {
  const ownFile = join(dir, `path-${digest(path)}.lock`);
  const deadline = options.waitSeconds === undefined ? Infinity : Date.now() + options.waitSeconds * 1000;
  for (;;) {
    const registry = await acquireLock(join(dir, 'paths.lock'), {
      ...options,
      waitSeconds: REGISTRY_WAIT_SECONDS,
    });
    if (registry.status === 'busy') {
      throw new InUseError(
        `the scratch path registry ${join(dir, 'paths.lock')} stayed locked for ${REGISTRY_WAIT_SECONDS} s ` +
          `(held by ${describeHolder(registry.holder)}, a run that is stuck while it checks its path): ` +
          'retry once it is gone, or stop it',
      );
    }
    let inTheWay: { file: string; holder: string; nested: boolean } | undefined;
    try {
      const own = await acquireLock(ownFile, { ...options, waitSeconds: 0 });
      if (own.status === 'busy')
        inTheWay = { file: ownFile, holder: describeHolder(own.holder), nested: false };
      else {
        const nested = await nestedHolder(dir, path, basename(ownFile), options.signal);
        if (nested === undefined) return own;
        own.release();
        inTheWay = { ...nested, nested: true };
      }
    } finally {
      registry.release();
    }
    const secondsLeft = Math.floor((deadline - Date.now()) / 1000);
    if (secondsLeft > 0 && !options.signal?.aborted) {
      // Waiting on the other run's file, not taking its place: no holder record of ours goes into it.
      const waited = await acquireLock(inTheWay.file, {
        ...options,
        holder: '',
        waitSeconds: Math.min(secondsLeft, 86_400),
      });
      if (waited.status === 'held') {
        waited.release();
        continue;
      }
    }
    throw new InUseError(
      inTheWay.nested
        ? `--path ${path} nests with the path of ${inTheWay.holder}: one run's unmount would take the other's ` +
            "mount with it; pass a path outside every other scratch run's"
        : `--path ${path} is in use on this instance by ${inTheWay.holder}: pass another --path`,
    );
  }
}

/** The directory scratch locks live in: `<run dir>/scratch-locks`. */
function scratchLockDirectory(runDir: string): string {
  const dir = join(runDir, 'scratch-locks');
  try {
    makeDirectories(dir, 0o755);
  } catch (err) {
    throw lockFileError(dir, err);
  }
  return dir;
}
