/**
 * Mounting and unmounting the scratch file system. The mount goes through the EFS mount helper
 * (efs-utils' `mount.efs`), over TLS, straight to the mount target's IP (`mounttargetip`), so there is
 * no wait for the mount target's DNS name to appear. `MOUNTFLEET_EFS_MOUNT_HELPER` replaces the helper
 * where NFS to EFS cannot run (tests); it is called exactly like `mount.efs FS_ID:/ DIR -o OPTIONS`.
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { MountfleetError } from '../common';
import { isMountPoint, readMountinfo, sameMount, topMount, type MountEntry } from '../system';

/** The efs-utils options scratch mounts use. */
function efsMountOptions(mountTargetIp: string): string[] {
  // noresvport: reconnect on a new source port after a network blip (AWS's recommendation for EFS).
  return ['tls', `mounttargetip=${mountTargetIp}`, 'noresvport'];
}

interface MountRequest {
  readonly fileSystemId: string;
  readonly path: string;
  readonly mountTargetIp: string;
  /** The helper program; the system's `mount -t efs` when unset. */
  readonly helper?: string;
  /** Kill the helper after this long. @default 120000 */
  readonly timeoutMs?: number;
  /** Aborting kills the helper at once (SIGTERM to the run must not wait for a hanging mount). */
  readonly signal?: AbortSignal;
}

/** The command line that mounts: [program, ...args]. */
export function mountCommand(request: MountRequest): [string, string[]] {
  const source = `${request.fileSystemId}:/`;
  const options = efsMountOptions(request.mountTargetIp).join(',');
  if (request.helper) return [request.helper, [source, request.path, '-o', options]];
  return ['mount', ['-t', 'efs', '-o', options, source, request.path]];
}

/**
 * Runs a program in its own process group, bounded: at the timeout or on abort the whole group is
 * SIGKILLed (a helper's own children, such as a `sleep` or a stuck `mount`, would otherwise hold its
 * output pipes open and the wait would go on). Rejects with a MountfleetError on failure, timeout or abort.
 */
function runBounded(program: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const commandLine = `${program} ${args.join(' ')}`;
  if (signal?.aborted) return Promise.reject(new MountfleetError(`${commandLine}: not started (stopping)`));
  return new Promise((resolveRun, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let stderr = '';
    let stopped: string | undefined;
    // Only the helper's last words make the error: a helper that writes without end cannot grow this.
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_KEPT_CHARS)));
    const stop = (why: string) => {
      stopped ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(
      () => stop(`no result within ${Math.round(timeoutMs / 1000)} s: killed`),
      timeoutMs,
    );
    const onAbort = () => stop('stopped (the run was asked to stop): killed');
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (err?: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      child.stderr.destroy();
      if (err) reject(err);
      else resolveRun();
    };
    child.once('error', (err) => finish(new MountfleetError(`${commandLine} failed: ${err.message}`)));
    // 'exit', not 'close': a grandchild that escaped the kill may still hold stderr open. On a failure the
    // helper's last words may still be in the pipe when 'exit' comes: they are read until stderr ends, or for
    // STDERR_DRAIN_MS at most (only the message's detail depends on it, never the outcome).
    child.once('exit', (code, sig) => {
      if (stopped) return finish(new MountfleetError(`${commandLine}: ${stopped}`));
      if (code === 0) return finish();
      const fail = () => {
        clearTimeout(drain);
        const detail = stderr.trim() || `exit status ${code ?? sig}`;
        finish(new MountfleetError(`${commandLine} failed: ${detail}`));
      };
      const drain = setTimeout(fail, STDERR_DRAIN_MS);
      if (child.stderr.readableEnded) fail();
      else child.stderr.once('end', fail);
    });
  });
}

/** The longest a failed helper's remaining stderr is read for after it exited. */
const STDERR_DRAIN_MS = 1000;
/** How much of a helper's stderr (its end) an error quotes. */
const STDERR_KEPT_CHARS = 4096;

/** Runs the mount helper; throws a MountfleetError with its output when it fails, times out or is aborted. */
export async function mountFileSystem(request: MountRequest): Promise<void> {
  const [program, args] = mountCommand(request);
  await runBounded(program, args, request.timeoutMs ?? 120_000, request.signal);
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** True when something is mounted exactly at `path` (in this process's mount namespace). */
export function isMounted(path: string, mountInfo = '/proc/self/mountinfo'): boolean {
  return isMountPoint(canonical(path), readMountinfo(mountInfo));
}

/** The mount on top at `path` (the one its name reaches), if any. */
export function topMountAt(path: string, mountInfo = '/proc/self/mountinfo'): MountEntry | undefined {
  return topMount(canonical(path), readMountinfo(mountInfo));
}

type UnmountOutcome = 'not-mounted' | 'unmounted' | 'lazy' | 'not-ours';

const UMOUNT_TIMEOUT_MS = 30_000;

/**
 * Unmounts the mount this run made at `path` — only while it is the one on top there and the same mount
 * (sameMount: a reused mount id is not enough); `not-ours` otherwise: never whatever else is at the path.
 * When it is busy (processes still hold files there), detaches it lazily (`umount -l`): it disappears from
 * the tree now and is freed when the last user goes.
 */
export async function unmount(path: string, ours: MountEntry): Promise<UnmountOutcome> {
  const isOurs = () => {
    const top = topMountAt(path);
    if (top === undefined) return 'not-mounted';
    return sameMount(top, ours) ? 'ours' : 'other';
  };
  const before = isOurs();
  if (before === 'not-mounted') return 'not-mounted';
  if (before === 'other') return 'not-ours';
  try {
    await runBounded('umount', [path], UMOUNT_TIMEOUT_MS);
    if (isOurs() !== 'ours') return 'unmounted';
  } catch {
    // busy, or the NFS server is gone: fall through to the lazy unmount
  }
  if (isOurs() !== 'ours') return 'unmounted';
  try {
    await runBounded('umount', ['-l', path], UMOUNT_TIMEOUT_MS);
  } catch (err) {
    if (isOurs() === 'ours') throw new MountfleetError(`cannot unmount ${path}: ${(err as Error).message}`);
  }
  return 'lazy';
}
