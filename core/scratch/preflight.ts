/**
 * The local checks `scratch run` makes before any AWS call (root, the EFS mount helper, a free path), so that a
 * run that cannot mount never creates (and pays for) a file system. The burst-credit check of `--expected-io`
 * is core/credit's.
 */
import { accessSync, constants } from 'node:fs';
import { isMounted } from './mount';

/** Where `mount -t efs` finds efs-utils' helper. */
const SYSTEM_MOUNT_HELPERS = ['/sbin/mount.efs', '/usr/sbin/mount.efs', '/usr/local/sbin/mount.efs'];

interface MountPreflight {
  readonly path: string;
  /** MOUNTFLEET_EFS_MOUNT_HELPER; the system's mount.efs when unset. */
  readonly mountHelper?: string;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The local checks `scratch run` makes before any AWS call, so that a run that cannot mount never creates
 * (and pays for) a file system. Each returns the problem with its fix, or undefined.
 *
 * Root first: mounting and the lock files under /run need it.
 */
export function rootProblem(uid: number | undefined = process.getuid?.()): string | undefined {
  if (uid === undefined || uid === 0) return undefined;
  return 'scratch run mounts a file system and must run as root (sudo mountfleet scratch run ...)';
}

/** Then, holding the path's lock: the EFS mount helper is there, and the path is no mount point yet. */
export function mountPreflightProblem(request: MountPreflight): string | undefined {
  if (request.mountHelper !== undefined) {
    if (!executable(request.mountHelper)) {
      return `MOUNTFLEET_EFS_MOUNT_HELPER=${request.mountHelper} is not an executable file`;
    }
  } else if (!SYSTEM_MOUNT_HELPERS.some(executable)) {
    return 'the EFS mount helper (mount.efs) is not installed: install amazon-efs-utils (the fleet user data does)';
  }
  if (isMounted(request.path)) {
    return `--path ${request.path} is already a mount point: unmount it (umount ${request.path}) or pass another --path`;
  }
  return undefined;
}
