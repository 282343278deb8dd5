/**
 * What `mountfleet tune --csi` prints: the static PV/PVC pairs for the Mountpoint S3 CSI driver v2, tuned for
 * an instance type exactly as the MountpointCsiVolumes construct renders them (core/tuner/csi-volumes.ts). The
 * volumes come from the flags (one volume, `--bucket`) or from the agent config's mounts; every problem is a
 * UsageError naming the flag or the field.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { UsageError } from '../common';
import {
  AZ_ID_PATTERN,
  BUCKET_NAME_PATTERN,
  DIRECTORY_BUCKET_NAME_PATTERN,
  checkMountPrefix,
  parseAgentConfig,
  type AgentConfig,
  type CachePolicy,
} from '../contract';
import {
  csiInputProblems,
  mountNames,
  planCsiClaims,
  renderCsiManifests,
  type CsiVolumeSpec,
  type InstanceTypeFacts,
} from '../tuner';
import { EXAMPLE_CONFIG, lookupNamedInstanceType } from './tune-report';

/** One volume as the flags describe it (`--bucket` and what goes with it). */
interface CsiVolumeFlags {
  readonly bucket?: string;
  readonly prefix?: string;
  readonly name?: string;
  readonly access?: 'read-only' | 'read-write';
  readonly dataset?: 'immutable' | 'mutable';
  readonly cache?: CachePolicy;
}

/** What `tune --csi` was asked (its flags, read). */
export interface CsiTuneRequest extends CsiVolumeFlags {
  readonly instanceType: string;
  /** undefined: answer from the built-in table only. */
  readonly ec2?: EC2Client;
  /** The agent config; the example config when unset. */
  readonly config?: AgentConfig;
  /** `--region`, else the environment's: the region the mount options of a `--bucket` volume name. */
  readonly region?: string;
  /** `--zone-id`: zone IDs with an Express cache bucket named by `expressBucketBase`. */
  readonly zoneIds: readonly string[];
  readonly expressBucketBase?: string;
  readonly namespace: string;
  readonly cacheSizeLimit?: string;
  readonly mountpointVersion?: string;
  readonly fallbackClaims?: boolean;
  readonly rootFreeGiB: number;
}

export interface CsiTuneResult {
  readonly instance: InstanceTypeFacts;
  /** The PV and PVC objects, two per claim. */
  readonly manifests: Record<string, unknown>[];
}

/** The manifests of the request's volumes for its instance type. */
export async function tuneCsiVolumes(request: CsiTuneRequest): Promise<CsiTuneResult> {
  const instance = await lookupNamedInstanceType(request.instanceType, request.ec2);
  const config = request.config ?? parseAgentConfig(EXAMPLE_CONFIG, '(example)');
  // In this order, the problems the flags can have are said: the volume, the cache buckets, the region.
  const volumes = request.bucket ? [flagVolume(request, request.bucket)] : configVolumes(request, config);
  const buckets = expressBuckets(request, config);
  const input = {
    instance,
    region: volumeRegion(request, config),
    namespace: request.namespace,
    volumes,
    expressBuckets: buckets,
    rootFreeGiB: request.rootFreeGiB,
    ...(request.cacheSizeLimit !== undefined ? { cacheSizeLimit: request.cacheSizeLimit } : {}),
    ...(request.mountpointVersion !== undefined ? { mountpointVersion: request.mountpointVersion } : {}),
    ...(request.fallbackClaims ? { fallbackClaims: true } : {}),
  };
  const [problem] = csiInputProblems(input);
  if (problem) throw new UsageError(`${problem.field}: ${problem.problem} — ${problem.fix}`);
  return { instance, manifests: renderCsiManifests(planCsiClaims(input), request.namespace) };
}

/** The one volume `--bucket` describes. */
function flagVolume(flags: CsiVolumeFlags, bucket: string): CsiVolumeSpec {
  if (!BUCKET_NAME_PATTERN.test(bucket))
    throw new UsageError(`--bucket "${bucket}": must be an S3 bucket name (3-63 lower-case characters)`);
  const prefixProblem = checkMountPrefix(flags.prefix ?? '');
  if (prefixProblem) throw new UsageError(`--prefix: ${prefixProblem}`);
  return {
    name: flags.name ?? bucket.replace(/\./g, '-'),
    bucket,
    ...(flags.prefix ? { prefix: flags.prefix } : {}),
    ...(flags.access ? { access: flags.access } : {}),
    ...(flags.dataset ? { dataset: flags.dataset } : {}),
    ...(flags.cache ? { cache: flags.cache } : {}),
  };
}

/** Without `--bucket`, the config's mounts, named after their paths; a volume flag without it is a typo. */
function configVolumes(flags: CsiVolumeFlags, config: AgentConfig): CsiVolumeSpec[] {
  const given = (['prefix', 'name', 'access', 'dataset', 'cache'] as const).filter(
    (k) => flags[k] !== undefined,
  );
  if (given.length) throw new UsageError(`--${given[0]} describes a volume: give --bucket too`);
  const names = mountNames(config.mounts.map((m) => m.path));
  return config.mounts.map((m, i) => ({ ...m, name: names[i].replace(/[_.]/g, '-') }));
}

/**
 * The Express bucket per zone ID: `--zone-id` with `--express-bucket-base` (always together), else none for a
 * `--bucket` volume, else the config's.
 */
function expressBuckets(request: CsiTuneRequest, config: AgentConfig): Record<string, string> {
  const { zoneIds, expressBucketBase: base } = request;
  if (!zoneIds.length && !base) return request.bucket ? {} : (config.expressCache?.buckets ?? {});
  if (!zoneIds.length || !base)
    throw new UsageError(
      '--zone-id and --express-bucket-base go together, e.g. --zone-id use1-az4 --express-bucket-base ml-cache',
    );
  const buckets: Record<string, string> = {};
  for (const azId of zoneIds) {
    if (!AZ_ID_PATTERN.test(azId))
      throw new UsageError(
        `--zone-id "${azId}": must be a zone ID such as use1-az4 (not a zone name like us-east-1a)`,
      );
    const bucket = `${base}--${azId}--x-s3`;
    if (!DIRECTORY_BUCKET_NAME_PATTERN.test(bucket) || bucket.length > 63)
      throw new UsageError(`--express-bucket-base "${base}": ${bucket} is not a directory bucket name`);
    buckets[azId] = bucket;
  }
  return buckets;
}

/** The region the mount options name: the request's for a `--bucket` volume, else the config's. */
function volumeRegion(request: CsiTuneRequest, config: AgentConfig): string {
  const region = request.bucket ? request.region : config.region;
  if (!region)
    throw new UsageError(
      '--csi --bucket needs a region for the mount options: pass --region, e.g. --region us-east-1, or set AWS_REGION',
    );
  return region;
}
