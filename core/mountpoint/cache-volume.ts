/**
 * The local cache volume: instance-store NVMe when the instance has it (RAID 0 over several disks), else
 * a bounded directory on the root volume. Preparing it runs mdadm/mkfs/mount through a CommandRunner so
 * tests check the exact commands without formatting disks.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isMountPoint } from '../mountinfo';
import { execCommand, type CommandRunner } from './command-runner';
import type { NvmeDisk } from './host';

export const INSTANCE_STORE_MOUNT_POINT = '/mnt/mountfleet-cache';
export const ROOT_CACHE_DIRECTORY = '/var/cache/mountfleet';
export const RAID_DEVICE = '/dev/md/mountfleet-cache';
/** Largest share of the root volume's free space the cache may take, and an absolute cap. */
export const ROOT_CACHE_FRACTION = 0.25;
export const ROOT_CACHE_CAP_MIB = 20 * 1024;
/** Below this a data cache is not worth having: metadata caching only. */
export const MIN_CACHE_MIB = 1024;
/** Mountpoint's own default keeps 5% free; we keep 10% of the volume for file-system overhead. */
export const INSTANCE_STORE_USABLE_FRACTION = 0.9;

export type CacheVolume =
  | {
      readonly kind: 'instance-store';
      readonly devices: readonly string[];
      /** The block device that gets the file system: the disk itself, or the RAID 0 array. */
      readonly device: string;
      readonly directory: string;
      readonly capacityMiB: number;
      readonly reason: string;
    }
  | {
      readonly kind: 'root';
      readonly directory: string;
      readonly capacityMiB: number;
      readonly reason: string;
    }
  | { readonly kind: 'none'; readonly reason: string };

/** `systemRoot` prefixes the directories (tests run the agent under a temporary root). */
export function planCacheVolume(
  disks: readonly NvmeDisk[],
  rootFreeMiB: number,
  systemRoot = '/',
): CacheVolume {
  if (disks.length > 0) {
    const totalMiB = disks.reduce((s, d) => s + d.sizeBytes, 0) / 1024 / 1024;
    const capacityMiB = Math.floor(totalMiB * INSTANCE_STORE_USABLE_FRACTION);
    const several = disks.length > 1;
    return {
      kind: 'instance-store',
      devices: disks.map((d) => d.device),
      device: several ? RAID_DEVICE : disks[0].device,
      directory: join(systemRoot, INSTANCE_STORE_MOUNT_POINT),
      capacityMiB,
      reason:
        `${disks.length} instance-store NVMe disk(s), ${Math.round(totalMiB / 1024)} GiB in all` +
        (several ? ', striped as RAID 0 (the cache is disposable, so no redundancy)' : '') +
        `; ${INSTANCE_STORE_USABLE_FRACTION * 100}% usable for the cache`,
    };
  }
  const capacityMiB = Math.min(Math.floor(rootFreeMiB * ROOT_CACHE_FRACTION), ROOT_CACHE_CAP_MIB);
  if (capacityMiB < MIN_CACHE_MIB) {
    return {
      kind: 'none',
      reason: `no instance store and only ${rootFreeMiB} MiB free on the root volume: metadata caching only`,
    };
  }
  return {
    kind: 'root',
    directory: join(systemRoot, ROOT_CACHE_DIRECTORY),
    capacityMiB,
    reason:
      `no instance store: ${ROOT_CACHE_FRACTION * 100}% of the root volume's ${rootFreeMiB} MiB free, ` +
      `capped at ${ROOT_CACHE_CAP_MIB} MiB so the job keeps its disk`,
  };
}

/**
 * Makes the instance-store volume usable: RAID 0 when several disks, ext4 with no reserved
 * blocks (the cache is not a system disk), mounted at the cache directory. Idempotent: a volume already
 * mounted there is kept (the agent may be restarted after boot).
 */
export async function prepareCacheVolume(
  volume: CacheVolume,
  run: CommandRunner = execCommand,
  mounted: (dir: string) => boolean = (dir) => isMountPoint(dir),
): Promise<void> {
  if (volume.kind === 'none') return;
  mkdirSync(volume.directory, { recursive: true, mode: 0o700 });
  if (volume.kind === 'root' || mounted(volume.directory)) return;
  if (volume.devices.length > 1) {
    await run('mdadm', [
      '--create',
      volume.device,
      '--level=0',
      '--run',
      '--force',
      `--raid-devices=${volume.devices.length}`,
      ...volume.devices,
    ]);
  }
  await run('mkfs.ext4', ['-F', '-q', '-m', '0', '-E', 'nodiscard', '-L', 'mountfleet-cache', volume.device]);
  await run('mount', ['-o', 'noatime', volume.device, volume.directory]);
}

/**
 * Makes a process's `--cache` directory, owned by the agent's user and closed to others (cached objects
 * keep no S3 permissions). Mountpoint 1.24 refuses to start without it and, at exit, removes only the
 * `mountpoint-cache` directory it makes inside, so this runs before every start.
 */
export function prepareCacheDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  if (!lstatSync(directory).isDirectory())
    throw new Error(`cache directory ${directory} is not a directory (a symlink or a file is in the way)`);
  chownSync(directory, process.getuid!(), process.getgid!());
  chmodSync(directory, 0o700);
}
