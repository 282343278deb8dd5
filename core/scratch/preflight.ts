/**
 * Checks `scratch run` makes before it creates anything: the local preconditions (root, mount helper, a
 * free path), and the burst-credit check for `--expected-io`.
 *
 * Burst credit: Every new bursting EFS file system starts with
 * 2.1 TiB of burst credit (about six hours at the 100 MiB/s burst rate). A job that moves more than that
 * through a small, fresh scratch file system drops to the baseline (50 KiB/s per GiB stored, at least
 * 1 MiB/s) and crawls, so we say so before creating anything. The check counts every byte in full
 * (reads are really metered at a third): erring on the side of a warning.
 */
import { accessSync, constants } from 'node:fs';
import { INITIAL_BURST_CREDIT_GIB } from '../plan';
import { GIB, MIB } from '../common';
import { isMounted } from './mount';

const BURST_BYTES_PER_SECOND = 100 * MIB;

type PreflightVerdict = {
  /** `warn`: over the credit, go ahead anyway; `refuse`: over the credit with --strict. */
  readonly status: 'ok' | 'warn' | 'refuse';
  readonly message: string;
};

function tib(bytes: number): string {
  return `${(bytes / GIB / 1024).toFixed(2)} TiB`;
}

/** Compares an expected I/O volume (bytes read + written) with the initial burst credit. */
export function burstCreditPreflight(expectedIoBytes: number, strict: boolean): PreflightVerdict {
  const creditBytes = INITIAL_BURST_CREDIT_GIB * GIB;
  const burstHours = expectedIoBytes / BURST_BYTES_PER_SECOND / 3600;
  if (expectedIoBytes <= creditBytes) {
    return {
      status: 'ok',
      message: `expected I/O ${tib(expectedIoBytes)} fits in the 2.1 TiB initial burst credit (about ${burstHours.toFixed(1)} h at 100 MiB/s)`,
    };
  }
  const jobs = Math.ceil(expectedIoBytes / creditBytes);
  return {
    status: strict ? 'refuse' : 'warn',
    message:
      `expected I/O ${tib(expectedIoBytes)} exceeds the 2.1 TiB initial burst credit of a new bursting file system: ` +
      `once it is spent, throughput drops to the baseline (50 KiB/s per GiB stored, at least 1 MiB/s). Instead: ` +
      `use an EBS gp3 volume for this job (125 MiB/s included, up to 1,000 MiB/s provisioned, priced by size), ` +
      `or an EFS file system with elastic throughput (no credit, paid per GB transferred), ` +
      `or split the work into ${jobs} jobs of at most 2.1 TiB each (every scratch file system starts with fresh credit). ` +
      `\`mountfleet plan\` compares the costs.`,
  };
}

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
