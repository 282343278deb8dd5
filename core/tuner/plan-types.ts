/**
 * The tuning plan's shapes: what the planner reads (facts and the agent config) and what it returns (one
 * command line per Mountpoint process, each setting with its reason). Shared by the planner's steps.
 */
import { type AgentConfig, type MountConfig } from '../contract';
import type { CacheVolume } from './cache-volume';
import type { MountpointOptions, RenderedFlag } from './command-line';
import type { InstanceTypeFacts } from './instance-facts';

/** The memory the tuner sizes caches from (the instance reads it: core/instance/host-readers.ts). */
export interface MemoryFacts {
  readonly totalMiB: number;
  /** Where the figure came from: /proc/meminfo or the cgroup limit when that is lower. */
  readonly source: string;
}

export interface TuningInput {
  readonly config: AgentConfig;
  readonly instance: InstanceTypeFacts;
  readonly memory: MemoryFacts;
  readonly cacheVolume: CacheVolume;
  /** This instance's Availability Zone ID, e.g. use1-az4 (from IMDS). */
  readonly azId?: string;
  /** Interfaces `--bind` may use; undefined when unknown (tuning for another machine). */
  readonly interfaces?: readonly string[];
  /** Result of the pre-mount probe of the zone's Express bucket; undefined when not probed. */
  readonly expressProbe?: { readonly healthy: boolean; readonly detail: string };
  readonly runDir?: string;
  /**
   * The agent's metrics relay each process exports to (a path per process), or null to export straight to
   * the CloudWatch agent (the relay could not listen). @default METRICS_RELAY_ENDPOINT
   */
  readonly metricsRelay?: string | null;
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

export interface MountPlan {
  /** File-name-safe name derived from the path, e.g. mnt-data. */
  readonly name: string;
  readonly mount: MountConfig;
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
