/**
 * The interfaces constructs accept from one another, aws-cdk-lib style: a construct of this library or one
 * brought with `from*Attributes`. They live below both the construct files and lib/private/, so a private
 * helper that takes a network or a cache needs no construct file.
 */
import type { IResource } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import type { CachePolicy } from '../core/contract';

/**
 * Where a fleet runs: a VPC and one subnet per AZ ID. AZ IDs (`use1-az4`) name the same physical zone in
 * every account, unlike AZ names, and they are what S3 Express directory buckets are placed by — so the
 * fleet's subnets are chosen by AZ ID too.
 */
export interface IFleetNetwork extends IConstruct {
  /** The VPC. */
  readonly vpc: ec2.IVpc;
  /** The subnet per AZ ID the fleet (and its scratch mount targets) use. */
  readonly subnets: Record<string, ec2.ISubnet>;
}

/** An S3 Express One Zone cache for Mountpoint (`--cache-xz`): one directory bucket per AZ ID. */
export interface IExpressCache extends IResource {
  /** The AZ IDs that have a cache bucket. */
  readonly azIds: string[];
  /** Directory bucket name per AZ ID (what the agent config's `expressCache.buckets` holds). */
  readonly bucketNames: Record<string, string>;
  /** The directory bucket name for an AZ ID; throws when the cache has no bucket in that zone. */
  bucketFor(azId: string): string;
  /** The `arn:aws:s3express:REGION:ACCOUNT:bucket/NAME` ARN for an AZ ID. */
  bucketArn(azId: string): string;
  /**
   * Grants what Mountpoint needs to use the cache: `s3express:CreateSession` (read-write sessions, since
   * Mountpoint writes blocks) on exactly these buckets, plus the KMS key when one encrypts them.
   */
  grantMountpointCache(grantee: iam.IGrantable): iam.Grant;
  /** An `AWS/S3` request metric of the bucket in one zone (needs the bucket's `EntireBucket` metrics filter). */
  metric(metricName: string, azId: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}

/**
 * The `scratch` section of the agent config. ComputeFleet assigns it to the config's schema type, so the
 * compiler keeps the two in step; the schema checks the values at synth.
 */
export interface ScratchAgentSettings {
  /** The mount targets' security group id. */
  readonly securityGroupId: string;
  /** The mount-target subnet id per AZ ID. */
  readonly subnets: { [azId: string]: string };
  /** Where `mountfleet scratch run` mounts when no `--path` is given. @default '/mnt/scratch' */
  readonly path?: string;
  /** Seconds a job gets after SIGTERM before a lazy unmount. @default 20 */
  readonly teardownGraceSeconds?: number;
  /** The KMS key for the file systems. @default - the AWS managed key `aws/elasticfilesystem` */
  readonly kmsKeyId?: string;
}

/** Per-job EFS scratch of a fleet, as a fleet needs it: {@link ScratchFileSystems} or an imported one. */
export interface IScratchFileSystems extends IConstruct, ec2.IConnectable {
  /** The fleet whose tag every scratch file system carries, and on which its IAM conditions key. */
  readonly fleetId: string;
  /** The mount targets' security group. */
  readonly securityGroup: ec2.ISecurityGroup;
  /** Subnet for mount targets, per AZ ID. */
  readonly subnets: Record<string, ec2.ISubnet>;
  /** The KMS key the file systems are encrypted with; the AWS managed key when unset. */
  readonly encryptionKey?: kms.IKey;
  /** Lets a peer (the fleet) reach the mount targets on TCP 2049. */
  allowMountsFrom(peer: ec2.IConnectable): void;
  /** The `scratch` settings of the agent config. */
  agentSettings(): ScratchAgentSettings;
  /** Grants what the agent needs to create, mount and delete the fleet's scratch file systems. */
  grantCreateAndDelete(grantee: iam.IGrantable): iam.Grant;
}

/** One S3 bucket (or prefix) the agent mounts with Mountpoint on every instance. */
export interface FleetMount {
  /**
   * The bucket to mount. Its account (`Bucket.fromBucketAttributes({ account })`, else the stack's) is the
   * owner Mountpoint expects (`--expected-bucket-owner`); a directory bucket (`…--x-s3`) is granted by session.
   */
  readonly bucket: s3.IBucket;
  /** Key prefix to mount, ending in `/`, without `*` or `?`. @default '' (the whole bucket; read-only mounts only) */
  readonly prefix?: string;
  /** Absolute mount path on the instance, e.g. `/mnt/datasets` (not a system directory; see the README's path rules). */
  readonly path: string;
  /** `read-only`, or `read-write` (needs a prefix; the role may then write and delete under it). @default 'read-only' */
  readonly access?: 'read-only' | 'read-write';
  /** `immutable` datasets get an indefinite metadata TTL (no HeadObject per open). @default 'mutable' */
  readonly dataset?: 'immutable' | 'mutable';
  /** How the mount caches. @default 'local+express' with an expressCache, else 'local' */
  readonly cache?: CachePolicy;
}

/**
 * A fleet run by AWS Batch, as its scratch teardown needs it: {@link BatchComputeFleet} (the teardown takes this
 * interface, so the construct that creates it and the teardown do not import each other).
 */
export interface IBatchComputeFleet extends IConstruct {
  /** The fleet id its queues, job definitions and scratch carry. */
  readonly fleetId: string;
  /** The job-queue ARNs, one per zone. */
  readonly jobQueueArns: string[];
  /** Grants what `mountfleet batch submit` needs: invoke the fleet's submit function, read job state. */
  grantSubmit(grantee: iam.IGrantable): iam.Grant;
  /**
   * Grants what the fleet's own functions need to make, submit and end runs (register per-run definitions, submit,
   * pass the job role, make and delete the runs' file systems). Never a submitter's: it could get any container
   * onto the hosts.
   */
  grantRunJobs(grantee: iam.IGrantable): iam.Grant;
  /** The environment of the fleet's Batch functions (BATCH_FUNCTION_ENV). */
  functionEnvironment(): Record<string, string>;
}
