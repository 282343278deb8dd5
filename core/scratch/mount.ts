/**
 * Mounting and unmounting the scratch file system. The mount goes through the EFS mount helper
 * (efs-utils' `mount.efs`), over TLS, straight to the mount target's IP (`mounttargetip`), so there is
 * no wait for the mount target's DNS name to appear. `MOUNTFLEET_EFS_MOUNT_HELPER` replaces the helper
 * where NFS to EFS cannot run (tests); it is called exactly like `mount.efs FS_ID:/ DIR -o OPTIONS`.
 */
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** The efs-utils options scratch mounts use. */
export function efsMountOptions(mountTargetIp: string): string[] {
  // noresvport: reconnect on a new source port after a network blip (AWS's recommendation for EFS).
  return ['tls', `mounttargetip=${mountTargetIp}`, 'noresvport'];
}

export interface MountRequest {
  readonly fileSystemId: string;
  readonly path: string;
  readonly mountTargetIp: string;
  /** The helper program; the system's `mount -t efs` when unset. */
  readonly helper?: string;
  /** Kill the helper after this long. @default 120000 */
  readonly timeoutMs?: number;
}

/** The command line that mounts: [program, ...args]. */
export function mountCommand(request: MountRequest): [string, string[]] {
  const source = `${request.fileSystemId}:/`;
  const options = efsMountOptions(request.mountTargetIp).join(',');
  if (request.helper) return [request.helper, [source, request.path, '-o', options]];
  return ['mount', ['-t', 'efs', '-o', options, source, request.path]];
}

export class MountError extends Error {
  override readonly name = 'MountError';
}

/** Runs the mount helper; throws MountError with its output when it fails. */
export async function mountFileSystem(request: MountRequest): Promise<void> {
  const [program, args] = mountCommand(request);
  try {
    await execFileAsync(program, args, { timeout: request.timeoutMs ?? 120_000, killSignal: 'SIGKILL' });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const detail = (e.stderr ?? '').trim() || e.message;
    throw new MountError(`${program} ${args.join(' ')} failed: ${detail}`);
  }
}

/** Undoes the octal escapes (`\040` for a space) the kernel uses in /proc mount tables. */
function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
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
  const target = canonical(path);
  return readFileSync(mountInfo, 'utf8')
    .split('\n')
    .some((line) => {
      const mountPoint = line.split(' ')[4];
      return mountPoint !== undefined && unescapeMountPath(mountPoint) === target;
    });
}

export type UnmountOutcome = 'not-mounted' | 'unmounted' | 'lazy';

/**
 * Unmounts `path` with the system's umount; when the mount is busy (processes still hold files there),
 * detaches it lazily (`umount -l`): it disappears from the tree now and is freed when the last user goes.
 */
export async function unmount(path: string): Promise<UnmountOutcome> {
  if (!isMounted(path)) return 'not-mounted';
  try {
    await execFileAsync('umount', [path], { timeout: 30_000 });
    if (!isMounted(path)) return 'unmounted';
  } catch {
    // busy, or the NFS server is gone: fall through to the lazy unmount
  }
  try {
    await execFileAsync('umount', ['-l', path], { timeout: 30_000 });
  } catch (err) {
    if (isMounted(path)) throw new MountError(`cannot unmount ${path}: ${(err as Error).message}`);
  }
  return 'lazy';
}
