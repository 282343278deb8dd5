/**
 * Everything `scratch run` checks and prepares on the instance before its first IMDS or AWS call, in the
 * order that gives the clearest answer: root; the path, resolved through symlinks (and held to the
 * mount-path rules where it leads); the run's locks (so a second run is told what holds the job or path, not
 * that the path is mounted); the EFS mount helper and a path that is no mount point yet; then the path's
 * directories, created now so that a path that cannot be made (below a read-only mount) fails before
 * anything is paid for. The path's parents must be directories only root can change
 * (core/system/trusted-path.ts): the mount comes a minute later, and nobody may re-point the path meanwhile.
 */
import {
  makeDirectories,
  LockFileError,
  holdCheckedDirectory,
  realMountPath,
  untrustedPathProblemBeforeCreating,
  type CheckedDirectory,
} from '../system';
import { InUseError, UsageError } from '../common';
import { checkMountPath } from '../contract';
import { mountPreflightProblem, rootProblem } from './preflight';
import { holdJobAndPath, type HeldRunLocks } from './run-locks';

interface LocalSetupRequest {
  readonly runDir: string;
  readonly fleetId: string;
  readonly jobId: string;
  /** `--path` (checked against the mount-path rules as the flag was read), else agent.json's, else the default. */
  readonly path: string;
  /** 0 refuses a held job id or path at once; undefined waits without limit; n waits at most n seconds. */
  readonly waitLockSeconds?: number;
  /** MOUNTFLEET_EFS_MOUNT_HELPER; the system's mount.efs when unset. */
  readonly mountHelper?: string;
  readonly signal?: AbortSignal;
  readonly log: (line: string) => void;
  /** @default process.getuid() */
  readonly uid?: number;
}

export interface LocalSetup {
  /** The resolved mount path (no symlink in it): what is locked, mounted and given to the job. */
  readonly path: string;
  /** The path's directory as checked: the run asks again right before it mounts. Released with the locks. */
  readonly checkedPath: CheckedDirectory;
  readonly locks: HeldRunLocks;
  /** The outermost directory created for the path (teardown removes it again), if any. */
  readonly createdDirectory?: string;
}

/**
 * Runs the local checks; throws a UsageError (exit 2: fix the flags or the machine) or
 * an InUseError (exit 75: another run holds the job id or a nesting path, or the wait for it was stopped).
 * Nothing is left held or created when it throws.
 */
export async function prepareLocalRun(request: LocalSetupRequest): Promise<LocalSetup> {
  const notRoot = rootProblem(request.uid);
  if (notRoot !== undefined) throw new UsageError(notRoot);
  const path = resolvedPath(request.path, request.log);
  const locks = await holdLocks(request, path);
  try {
    const mountProblem = mountPreflightProblem({ path, mountHelper: request.mountHelper });
    if (mountProblem !== undefined) throw new UsageError(mountProblem);
    const pathProblem = untrustedPathProblemBeforeCreating(path);
    if (pathProblem !== undefined) throw new UsageError(`--path ${path}: ${pathProblem}`);
    const createdDirectory = createPath(path);
    try {
      return { path, locks, createdDirectory, checkedPath: holdCheckedDirectory(path) };
    } catch (err) {
      throw new UsageError(`--path ${path}: ${(err as Error).message}`);
    }
  } catch (err) {
    locks.release();
    throw err;
  }
}

/**
 * The path with every symlink resolved; a path that resolves elsewhere is held to the mount-path rules there
 * (the given one already was, as the flag or agent.json was read).
 */
export function resolvedPath(given: string, log: (line: string) => void): string {
  const real = realMountPath(given);
  if (real === given) return given;
  const realProblem = checkMountPath(real);
  if (realProblem) {
    throw new UsageError(
      `--path ${given} resolves through a symlink to ${real}, which ${realProblem}: pass a real directory`,
    );
  }
  log(`--path ${given} resolves through a symlink to ${real}: mounting there`);
  return real;
}

async function holdLocks(request: LocalSetupRequest, path: string): Promise<HeldRunLocks> {
  const lockRequest = { ...request, path, waitSeconds: 0 };
  let held: InUseError;
  try {
    return await holdJobAndPath(lockRequest);
  } catch (err) {
    if (err instanceof LockFileError) throw new UsageError(err.message);
    if (!(err instanceof InUseError)) throw err;
    if (request.waitLockSeconds === 0) throw inUse(err, request);
    held = err;
  }
  const limit = request.waitLockSeconds === undefined ? '' : ` (at most ${request.waitLockSeconds} s)`;
  request.log(`${held.message}: waiting${limit}`);
  try {
    return await holdJobAndPath({ ...lockRequest, waitSeconds: request.waitLockSeconds });
  } catch (err) {
    throw err instanceof InUseError ? inUse(err, request) : err;
  }
}

/** What the run says when another run holds its job id or path: refused, or stopped while it waited. */
function inUse(err: InUseError, request: LocalSetupRequest): InUseError {
  const hint = request.waitLockSeconds === 0 ? '; --wait-lock[=SECONDS] waits for it instead' : '';
  return new InUseError(
    request.signal?.aborted ? `stopped while waiting: ${err.message}` : `refusing: ${err.message}${hint}`,
    { cause: err },
  );
}

/** Creates the path's missing directories; a failure names the path and the cause. */
function createPath(path: string): string | undefined {
  try {
    return makeDirectories(path);
  } catch (err) {
    throw new UsageError(
      `--path ${path} cannot be created (${(err as Error).message}): pass a path on a writable file system`,
    );
  }
}
