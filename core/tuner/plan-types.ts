/**
 * The tuning plan's shapes: what the tuner reads (the host it plans for and each mount's own settings) and
 * what it returns (one command line per Mountpoint process, each setting with its reason). Shared by the
 * planner's steps.
 */
import type { CachePolicy } from '../contract';
import type { CacheVolume } from './cache-volume';
import type { MountpointOptions, RenderedFlag } from './command-line';
import type { InstanceTypeFacts } from './instance-facts';

/** The memory the tuner sizes caches from (the instance reads it: core/instance/host-readers.ts). */
export interface MemoryFacts {
  readonly totalMiB: number;
  /** Where the figure came from: /proc/meminfo or the cgroup limit when that is lower. */
  readonly source: string;
}

/**
 * The host every mount shares: its facts (read on the instance, or assumed for an instance type) and how
 * Mountpoint runs there. Nothing in it names a fleet or an agent config.
 */
export interface TuningHost {
  readonly instance: InstanceTypeFacts;
  readonly memory: MemoryFacts;
  readonly cacheVolume: CacheVolume;
  /** Interfaces `--bind` may use; undefined when unknown (tuning for another machine). */
  readonly interfaces?: readonly string[];
  /** The buckets' Region (`--region`). */
  readonly region: string;
  /** The Mountpoint release that runs the mounts: flags newer than it are left out. */
  readonly mountpointVersion: string;
  /** This instance's Availability Zone ID, e.g. use1-az4 (from IMDS). */
  readonly azId?: string;
  /** The Express directory bucket of this zone; mounts whose cache policy includes express use it. */
  readonly expressBucket?: string;
  /** Result of the pre-mount probe of the zone's Express bucket; undefined when not probed. */
  readonly expressProbe?: { readonly healthy: boolean; readonly detail: string };
  readonly runDir?: string;
  /**
   * The agent's metrics relay each process exports to (a path per process), or null to export straight to
   * the CloudWatch agent (the relay could not listen). @default METRICS_RELAY_ENDPOINT
   */
  readonly metricsRelay?: string | null;
}

/** One mount's own settings: all the tuner reads of a mount (an agent.json `mounts[]` entry has them). */
export interface MountSettings {
  readonly bucket: string;
  /** Key prefix ending in "/", or '' for the whole bucket. */
  readonly prefix: string;
  /** Where the mount appears; it also names the mount's cache directory and metrics path. */
  readonly path: string;
  readonly access: 'read-only' | 'read-write';
  readonly dataset: 'immutable' | 'mutable';
  readonly cache: CachePolicy;
  /** The account that must own the bucket. */
  readonly expectedBucketOwner?: string;
}

export interface Decision {
  readonly setting: string;
  readonly value: string;
  readonly reason: string;
  /** The fact it rests on, with its source. */
  readonly fact: string;
}

/** `main`: the only process of a mount without failover, mounted at the user's path. */
export type ProcessRole = 'main' | 'xz' | 'direct';

export interface ProcessPlan {
  readonly role: ProcessRole;
  readonly mountPoint: string;
  readonly options: MountpointOptions;
  /** Mountpoint's arguments (after the program name), background mode. */
  readonly args: string[];
  readonly environment: Readonly<Record<string, string>>;
}

/** One mount's plan; `mount` is the settings it was planned from, as given. */
export interface MountPlan {
  /** File-name-safe name derived from the path, e.g. mnt-data. */
  readonly name: string;
  readonly mount: MountSettings;
  /** Two processes (Express-cached and cache-less standby) with the user's path switched between them. */
  readonly failover: boolean;
  readonly expressBucket?: string;
  readonly processes: readonly ProcessPlan[];
  readonly decisions: readonly Decision[];
}

export interface TuningPlan {
  readonly mountpointVersion: string;
  readonly instanceType: string;
  readonly host: readonly Decision[];
  readonly cacheVolume: CacheVolume;
  readonly mounts: readonly MountPlan[];
  /** Flags the pinned release does not have, left out of every command line. */
  readonly omittedFlags: readonly { flag: RenderedFlag; since: string }[];
}
