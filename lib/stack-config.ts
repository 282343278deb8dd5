/**
 * The resolved config of one {@link MountfleetStack}, as plain interfaces so that jsii languages can build
 * it too. `resolveAppConfig` (lib/app-config.ts) returns it; the compiler keeps its zod schema in step.
 */
import { type CachePolicy } from '../core/contract';
import type { FleetNetworkAttributes } from './fleet-network';

/** A new VPC for the stack, one subnet per AZ ID. */
export interface StackNewNetworkConfig {
  /** The AZ IDs of the subnets, e.g. `['use1-az4', 'use1-az6']`. */
  readonly azIds: string[];
  /** The VPC CIDR block. @default - FleetNetwork's default */
  readonly cidr?: string;
  /** No internet gateway, NAT or endpoints (the sandbox profile). @default false */
  readonly isolated?: boolean;
}

/** The stack's Express cache: one directory bucket per AZ ID. */
export interface StackExpressCacheConfig {
  /** The AZ IDs that get a directory bucket. */
  readonly azIds: string[];
  /** The base of the bucket names. @default - ExpressCache's default */
  readonly bucketBaseName?: string;
  /** Days after which cached objects expire. */
  readonly expirationDays: number;
}

/** One bucket (or prefix) every instance of the fleet mounts. */
export interface StackMountConfig {
  /** The bucket name. */
  readonly bucket: string;
  /** Key prefix to mount, ending in `/`. @default '' (the whole bucket) */
  readonly prefix?: string;
  /** Absolute mount path on the instance. */
  readonly path: string;
  /** `read-only` or `read-write`. @default 'read-only' */
  readonly access?: 'read-only' | 'read-write';
  /** `immutable` or `mutable`. @default 'mutable' */
  readonly dataset?: 'immutable' | 'mutable';
  /** How the mount caches. @default - ComputeFleet's default */
  readonly cache?: CachePolicy;
  /** The bucket owner's account id, when it is not the stack's. @default - the stack's account */
  readonly bucketOwner?: string;
}

/** The stack's compute fleet (see ComputeFleetProps for the defaults). */
export interface StackFleetConfig {
  /** Instance types, in order of preference. @default - ComputeFleet's default */
  readonly instanceTypes?: string[];
  /** Minimum group size. @default - ComputeFleet's default */
  readonly minCapacity?: number;
  /** Maximum group size. @default - ComputeFleet's default */
  readonly maxCapacity?: number;
  /** Desired group size. @default - ComputeFleet's default */
  readonly desiredCapacity?: number;
  /** On-Demand instances before Spot. @default - ComputeFleet's default */
  readonly onDemandBaseCapacity?: number;
  /** Percentage of On-Demand above the base. @default - ComputeFleet's default */
  readonly onDemandPercentageAboveBaseCapacity?: number;
  /** Root volume size in GiB. @default - ComputeFleet's default */
  readonly rootVolumeGiB?: number;
  /** The buckets every instance mounts. @default - none */
  readonly mounts?: StackMountConfig[];
  /** `asg` (ComputeFleet: an Auto Scaling group) or `batch` (BatchComputeFleet: Batch queues per zone). */
  readonly scheduler: 'asg' | 'batch';
  /** Batch: most Spot vCPUs per zone. @default - BatchComputeFleet's default */
  readonly spotMaxvCpus?: number;
  /** Batch: most On-Demand vCPUs per zone. @default - BatchComputeFleet's default */
  readonly onDemandMaxvCpus?: number;
}

/** The stack's scratch file systems. */
export interface StackScratchConfig {
  /** Where `scratch run` mounts by default. @default '/mnt/scratch' */
  readonly mountPath?: string;
  /** Seconds a job gets after SIGTERM before a lazy unmount. @default 20 */
  readonly teardownGraceSeconds?: number;
}

/** The stack's orphan reaper (see OrphanReaperProps for the defaults). */
export interface StackReaperConfig {
  /** Report only, delete nothing. @default false */
  readonly dryRun?: boolean;
  /** Minutes between scheduled runs. @default - OrphanReaper's default */
  readonly scheduleMinutes?: number;
  /** Minutes a file system is left alone after creation. @default - OrphanReaper's default */
  readonly graceMinutes?: number;
  /** Minutes without client connections that count as idle. @default - OrphanReaper's default */
  readonly idleWindowMinutes?: number;
  /** Deletions per run at most. @default - OrphanReaper's default */
  readonly maxDeletionsPerRun?: number;
  /** Deletions per run that raise the alarm. @default - OrphanReaper's default */
  readonly deletionAlarmThreshold?: number;
}

/** The stack's alarms and dashboard. */
export interface StackMonitoringConfig {
  /** Whether the reaper's alarms are created. */
  readonly alarms: boolean;
  /** Whether the storage dashboard is created. */
  readonly dashboard: boolean;
  /** An existing SNS topic the alarms notify. @default - none */
  readonly alarmTopicArn?: string;
}

/** One stack of the bundled app, with every default filled in. */
export interface ResolvedStackConfig {
  /** The stack name. */
  readonly stackName: string;
  /** The fleet id (tags, IAM conditions, names). */
  readonly fleetId: string;
  /** `aws` (everything) or `sandbox` (the local emulator). */
  readonly profile: 'aws' | 'sandbox';
  /** The account to deploy to. @default - the CLI's account */
  readonly account?: string;
  /** The Region to deploy to. */
  readonly region: string;
  /** A new VPC, or an existing one by its attributes. */
  readonly network: StackNewNetworkConfig | FleetNetworkAttributes;
  /** The Express cache. @default - none */
  readonly expressCache?: StackExpressCacheConfig;
  /** The compute fleet. */
  readonly fleet: StackFleetConfig;
  /** The scratch file systems. @default - none */
  readonly scratch?: StackScratchConfig;
  /** The orphan reaper. */
  readonly reaper: StackReaperConfig;
  /** Alarms and dashboard. */
  readonly monitoring: StackMonitoringConfig;
}
