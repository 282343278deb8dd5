/**
 * Which caches serve a path: the Mountpoint process behind the FUSE mount that holds it (found by the
 * mount's device, so the agent's bind mounts of a process's mount point count too) and the cache flags on
 * its command line. Works for the agent's mounts and for a `mount-s3` started by hand.
 */
import { readdirSync, readFileSync, readlinkSync, statfsSync } from 'node:fs';
import { MIB } from '../common';
import { mountHolding, readMountinfo, type MountEntry } from '../system';

export interface MountCaches {
  readonly mountPoint: string;
  readonly fsType: string;
  /** The Mountpoint process serving the mount, when one was found in this PID namespace. */
  readonly pid?: number;
  /** `--cache DIR`: the local data cache. */
  readonly local?: {
    readonly directory: string;
    /** Bytes it may hold: `--max-cache-size`, or what Mountpoint's default (keep 5 % of the disk free) leaves now. */
    readonly maxBytes?: number;
    readonly limitFrom: 'max-cache-size' | 'free space';
  };
  /** `--cache-xz BUCKET`: the shared S3 Express One Zone cache of the zone. */
  readonly shared?: { readonly bucket: string };
}

/** Mountpoint's largest object (and block) the shared Express cache holds: larger objects bypass it. */
export const SHARED_CACHE_MAX_OBJECT_BYTES = 1024 * 1024;

function commandLines(): { pid: number; argv: string[] }[] {
  const out: { pid: number; argv: string[] }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(entry), argv });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

const flagValue = (argv: readonly string[], flag: string): string | undefined => {
  const i = argv.indexOf(flag);
  if (i >= 0) return argv[i + 1];
  return argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
};

/** What a Mountpoint `--cache DIR` may hold when no `--max-cache-size` is given: free space minus 5 % of the disk. */
function defaultCacheBytes(directory: string): number | undefined {
  try {
    const fs = statfsSync(directory);
    return Math.max(0, fs.bavail * fs.bsize - 0.05 * fs.blocks * fs.bsize);
  } catch {
    return undefined;
  }
}

/** The mount holding `path` and its caches; undefined when the path is on no FUSE mount. */
export function mountCaches(
  path: string,
  entries: readonly MountEntry[] = readMountinfo(),
): MountCaches | undefined {
  const mount = mountHolding(path, entries);
  if (!mount || !mount.fsType.startsWith('fuse')) return undefined;
  const samePoints = new Set(entries.filter((e) => e.device === mount.device).map((e) => e.mountPoint));
  // Mountpoint's usage is `mount-s3 [OPTIONS] BUCKET DIRECTORY` (the agent renders it so). Never this
  // process, named as /proc names it (in a PID namespace without its own /proc, process.pid differs).
  const self = Number(readlinkSync('/proc/self'));
  const server = commandLines().find(
    ({ pid, argv }) =>
      pid !== self &&
      argv.length > 2 &&
      !argv[argv.length - 2].startsWith('-') &&
      samePoints.has(argv[argv.length - 1]),
  );
  const base = { mountPoint: mount.mountPoint, fsType: mount.fsType };
  if (!server) return base;
  const { argv } = server;
  const cacheDir = flagValue(argv, '--cache');
  const maxCacheMiB = flagValue(argv, '--max-cache-size');
  const xz = flagValue(argv, '--cache-xz');
  return {
    ...base,
    pid: server.pid,
    ...(cacheDir
      ? {
          local: {
            directory: cacheDir,
            ...(maxCacheMiB !== undefined
              ? { maxBytes: Number(maxCacheMiB) * MIB, limitFrom: 'max-cache-size' as const }
              : { maxBytes: defaultCacheBytes(cacheDir), limitFrom: 'free space' as const }),
          },
        }
      : {}),
    ...(xz ? { shared: { bucket: xz } } : {}),
  };
}
