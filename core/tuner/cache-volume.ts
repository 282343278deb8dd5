/**
 * The plan of the local cache volume: instance-store NVMe when the instance has it (RAID 0 over several
 * disks), else a bounded directory on the root volume. Pure, so the constructs and `tune` plan with it;
 * preparing the volume on the instance is cache-volume-setup.ts.
 */
import { join } from 'node:path';
import type { InstanceTypeFacts } from './instance-facts';

const INSTANCE_STORE_MOUNT_POINT = '/mnt/mountfleet-cache';
const ROOT_CACHE_DIRECTORY = '/var/cache/mountfleet';
export const RAID_DEVICE = '/dev/md/mountfleet-cache';
/** Largest share of the root volume's free space the cache may take, and an absolute cap. */
const ROOT_CACHE_FRACTION = 0.25;
const ROOT_CACHE_CAP_MIB = 20 * 1024;
/** Below this a data cache is not worth having: metadata caching only. */
const MIN_CACHE_MIB = 1024;
/** Mountpoint's own default keeps 5% free; we keep 10% of the volume for file-system overhead. */
const INSTANCE_STORE_USABLE_FRACTION = 0.9;
/** Free root-volume space assumed when planning for an instance type rather than on an instance (`tune`, EKS). */
export const DEFAULT_ROOT_FREE_GIB = 20;

/** An instance-store NVMe disk: found on the instance (host.ts) or listed for its type. */
export interface NvmeDisk {
  /** e.g. /dev/nvme1n1 */
  readonly device: string;
  readonly sizeBytes: number;
}

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
 * The instance-store disks an instance of this type has, named as they appear on a Nitro instance (the root
 * EBS volume is nvme0n1, the instance-store disks follow from nvme1n1), with the type's listed size.
 */
export function listedInstanceStoreDisks(instance: InstanceTypeFacts): NvmeDisk[] {
  const store = instance.instanceStore;
  if (!store) return [];
  return Array.from({ length: store.disks }, (_, i) => ({
    device: `/dev/nvme${i + 1}n1`,
    sizeBytes: store.diskSizeGB * 1e9,
  }));
}

/** The disks' names for a person: `/dev/nvme1n1`, or `/dev/nvme1n1..nvme4n1` for several. */
export function describeDisks(disks: readonly NvmeDisk[]): string {
  if (disks.length <= 1) return disks.map((d) => d.device).join('');
  return `${disks[0].device}..${disks[disks.length - 1].device.replace(/^\/dev\//, '')}`;
}

/**
 * The cache volume the agent would plan on a fresh instance of this type: its listed instance store, else
 * `rootFreeGiB` free on the root volume. The planner's input for `tune` and the EKS volumes.
 */
export function planCacheVolumeForType(
  instance: InstanceTypeFacts,
  rootFreeGiB = DEFAULT_ROOT_FREE_GIB,
): CacheVolume {
  return planCacheVolume(listedInstanceStoreDisks(instance), rootFreeGiB * 1024);
}
