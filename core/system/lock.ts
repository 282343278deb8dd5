/**
 * Locks that die with their holder: `flock(2)` on a file under the run dir, so that a job id and a mount
 * path are each held by one `scratch run` at a time on an instance, and a run dir by one `mountfleet up`,
 * and a SIGKILLed holder frees them at once.
 *
 * Node has no flock, and a native module is not worth it: we open the lock file ourselves and let
 * util-linux `flock` lock *our* file descriptor, passed as the child's fd 3. A flock lock belongs to the
 * open file description, not to the process that asked for it, so it stays held by our descriptor after
 * `flock` exits, and goes when our process closes it or dies. libuv opens files close-on-exec, so the job
 * and its children never inherit the descriptor (a stray background process cannot keep a lock alive).
 */
import { spawn } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { EXIT_STATUS, MountfleetError } from '../common';

/** Exit status of `flock -n` / `flock -w` when the lock is held by someone else. */
const FLOCK_BUSY = 1;

interface LockOptions {
  /** What the holder writes into the file, for the message a refused run prints. */
  readonly holder: string;
  /** Wait at most this long for the lock (0: refuse at once); without it, wait as long as it takes. */
  readonly waitSeconds?: number;
  /** Aborting gives up the wait. */
  readonly signal?: AbortSignal;
}

type LockResult =
  /** `fd` is the descriptor the lock lives on: a process it is passed to holds the lock too. */
  | { readonly status: 'held'; readonly fd: number; release(): void }
  /** Someone else holds it; `holder` is what they wrote into the file (may be empty while they write it). */
  | { readonly status: 'busy'; readonly holder: string };

export type HeldLock = Extract<LockResult, { readonly status: 'held' }>;

/** Runs `flock` on `fd`; resolves with its exit status (undefined when aborted). */
function flockOn(fd: number, args: string[], signal: AbortSignal | undefined): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', [...args, '3'], { stdio: ['ignore', 'ignore', 'pipe', fd], signal });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.name === 'AbortError') resolve(undefined);
      else reject(new Error(`cannot run flock (util-linux): ${err.message}`));
    });
    child.once('close', (code) => {
      if (signal?.aborted) resolve(undefined);
      else if (code === 0 || code === FLOCK_BUSY) resolve(code);
      else reject(new Error(`flock failed (status ${code}): ${stderr.trim()}`));
    });
  });
}

/** A lock file that cannot be opened or written (read-only or full run dir), named with its cause. */
export class LockFileError extends MountfleetError {
  override readonly name = 'LockFileError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, EXIT_STATUS.failure, options);
  }
}

export function lockFileError(file: string, err: unknown): LockFileError {
  return new LockFileError(
    `cannot write ${file} (${(err as Error).message}): the run dir must be writable and ` +
      'not full; set MOUNTFLEET_RUN_DIR to another directory (default /run/mountfleet)',
    { cause: err },
  );
}

/** Takes an exclusive lock on `file` (created if missing), held until release() or this process ends. */
export async function acquireLock(file: string, options: LockOptions): Promise<LockResult> {
  let fd: number;
  try {
    fd = openSync(file, 'a+', 0o644);
  } catch (err) {
    throw lockFileError(file, err);
  }
  const args =
    options.waitSeconds === undefined
      ? []
      : options.waitSeconds === 0
        ? ['-n']
        : ['-w', String(options.waitSeconds)];
  let code: number | undefined;
  try {
    code = await flockOn(fd, ['-x', ...args], options.signal);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (code !== 0) {
    closeSync(fd);
    return { status: 'busy', holder: readHolder(file) };
  }
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${options.holder}\n`);
  } catch (err) {
    closeSync(fd);
    throw lockFileError(file, err);
  }
  let released = false;
  return {
    status: 'held',
    fd,
    release() {
      if (released) return;
      released = true;
      closeSync(fd);
    },
  };
}

function readHolder(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
