/**
 * What one `scratch run` holds on its instance for its whole life: its job id (within its fleet) and its
 * mount path. A second run of the same job would reuse, then delete, the file system the first is using; a
 * second run on the same path would stack its mount on the first's and unmount both. Either one is refused
 * before anything is created, or waits when asked to (`--wait-lock`).
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { acquireLock, scratchLockDirectory } from './lock';
import { ScratchInUseError } from './setup-errors';

export interface RunLockRequest {
  /** MOUNTFLEET_RUN_DIR (/run/mountfleet by default): the locks are files under `scratch-locks/`. */
  readonly runDir: string;
  readonly fleetId: string;
  readonly jobId: string;
  readonly path: string;
  /** Wait this long for a lock another run holds; 0 refuses at once; undefined waits without limit. */
  readonly waitSeconds?: number;
  readonly signal?: AbortSignal;
}

interface Holder {
  readonly pid: number;
  readonly fleetId: string;
  readonly jobId: string;
  readonly path: string;
  readonly startedAt: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The path with symlinks in its existing part resolved, so two spellings of one directory share a lock. */
function canonicalPath(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(canonicalPath(parent), basename(absolute));
  }
}

function describeHolder(text: string): string {
  try {
    const h = JSON.parse(text) as Holder;
    return `job ${h.jobId} at ${h.path} (pid ${h.pid}, since ${h.startedAt})`;
  } catch {
    return 'another run (starting up)';
  }
}

/**
 * Takes the job lock, then the path lock (always in that order, so two runs cannot deadlock); returns what
 * releases both. Throws ScratchInUseError naming the holder when either is taken and the wait is over.
 */
export async function holdJobAndPath(request: RunLockRequest): Promise<() => void> {
  const dir = scratchLockDirectory(request.runDir);
  const path = canonicalPath(request.path);
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
    throw new ScratchInUseError(
      `job ${request.jobId} of fleet ${request.fleetId} is already running on this instance: ` +
        `held by ${describeHolder(job.holder)}; wait for it to end, or use another --job`,
    );
  }
  const pathLock = await acquireLock(join(dir, `path-${digest(path)}.lock`), options).catch(
    (err: unknown) => {
      job.release();
      throw err;
    },
  );
  if (pathLock.status === 'busy') {
    job.release();
    throw new ScratchInUseError(
      `--path ${path} is in use on this instance by ${describeHolder(pathLock.holder)}: ` +
        'pass another --path',
    );
  }
  return () => {
    pathLock.release();
    job.release();
  };
}
