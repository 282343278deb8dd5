/**
 * The NFS client's per-mount byte counters from `/proc/self/mountstats`, so the credit guard sees a fast
 * job within seconds instead of waiting minutes for CloudWatch's datapoints.
 *
 * Format (Linux fs/nfs/super.c, `nfs_show_stats`, statvers 1.1): each mount starts with
 * `device SOURCE mounted on MOUNTPOINT with fstype nfs4 statvers=1.1`, and an NFS mount's block has a line
 * `bytes: NORMALREAD NORMALWRITE DIRECTREAD DIRECTWRITE SERVERREAD SERVERWRITE READPAGES WRITEPAGES`.
 * The server counts are the bytes that crossed the wire (page cache hits excluded), which is what EFS
 * meters. Mount points are escaped like /proc/mounts (space as `\040`). efs-utils' TLS mounts show the
 * local stunnel (`127.0.0.1:/`) as the device, so the mount is found by its mount point, not its source.
 */
import { readFileSync } from 'node:fs';

export interface NfsByteCounters {
  /** Bytes read from the server since the mount. */
  readonly serverReadBytes: number;
  /** Bytes written to the server since the mount. */
  readonly serverWriteBytes: number;
}

/** Where the kernel shows the counters of the mounts this process sees. */
const MOUNTSTATS_FILE = '/proc/self/mountstats';

const unescapeMountPath = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/** The counters of the NFS mount at `mountPoint` in mountstats TEXT (the last one mounted there), if any. */
export function parseNfsByteCounters(text: string, mountPoint: string): NfsByteCounters | undefined {
  let inTarget = false;
  let found: NfsByteCounters | undefined;
  for (const line of text.split('\n')) {
    const device = /^device \S+ mounted on (\S+) with fstype (\S+)/.exec(line);
    if (device) {
      inTarget = unescapeMountPath(device[1]) === mountPoint && device[2].startsWith('nfs');
      continue;
    }
    if (!inTarget) continue;
    const bytes = /^\s+bytes:\s+(.*)$/.exec(line);
    if (!bytes) continue;
    const fields = bytes[1].trim().split(/\s+/).map(Number);
    if (fields.length >= 6 && fields.every(Number.isFinite)) {
      found = { serverReadBytes: fields[4], serverWriteBytes: fields[5] };
    }
  }
  return found;
}

/** A reader for the guard: undefined when the file or the mount's counters cannot be read (not NFS, no procfs). */
export function mountStatsReader(
  mountPoint: string,
  file: string = MOUNTSTATS_FILE,
): () => NfsByteCounters | undefined {
  return () => {
    try {
      return parseNfsByteCounters(readFileSync(file, 'utf8'), mountPoint);
    } catch {
      return undefined;
    }
  };
}
