/**
 * `mountfleet tune --csi`: the static PV/PVC pairs for the Mountpoint S3 CSI driver v2, tuned for the
 * instance type exactly as the MountpointCsiVolumes construct renders them, for users who apply
 * manifests themselves. Its flags, read into core/instance's tuneCsiVolumes request, and the manifests printed.
 */
import { Option, type Command } from 'commander';
import { ec2Client } from '../../core/aws';
import { CACHE_POLICIES, type AgentConfig } from '../../core/contract';
import { type CsiTuneRequest, type CsiTuneResult } from '../../core/instance';
import { toYamlStream } from '../../core/tuner';

export interface CsiOptions {
  csi?: boolean;
  /** `--region` of `tune`: the region the mount options name. */
  region?: string;
  bucket?: string;
  prefix?: string;
  name?: string;
  access?: 'read-only' | 'read-write';
  dataset?: 'immutable' | 'mutable';
  cache?: (typeof CACHE_POLICIES)[number];
  zoneId: string[];
  expressBucketBase?: string;
  namespace: string;
  cacheSizeLimit?: string;
  mountpointVersion?: string;
  fallbackClaims?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The `--csi` flags of `tune`. */
export function addCsiOptions(command: Command): Command {
  return command
    .option(
      '--csi',
      'print PersistentVolume/PersistentVolumeClaim YAML for the Mountpoint S3 CSI driver v2 on stdout',
    )
    .option('--bucket <name>', 'with --csi: the bucket of one volume (default: the agent config mounts)')
    .option('--prefix <prefix>', 'with --csi --bucket: key prefix, ending in "/"')
    .option('--name <name>', 'with --csi --bucket: PV/PVC name (default: the bucket name)')
    .addOption(new Option('--access <access>', 'with --csi --bucket').choices(['read-only', 'read-write']))
    .addOption(new Option('--dataset <kind>', 'with --csi --bucket').choices(['immutable', 'mutable']))
    .addOption(new Option('--cache <policy>', 'with --csi --bucket').choices([...CACHE_POLICIES]))
    .option('--zone-id <id>', 'with --csi: a zone ID with an Express cache bucket; repeatable', collect, [])
    .option('--express-bucket-base <name>', 'with --csi --zone-id: cache buckets are <name>--<zone-id>--x-s3')
    .option('--namespace <ns>', 'with --csi: namespace of the claims', 'default')
    .option(
      '--cache-size-limit <quantity>',
      'with --csi: cacheEmptyDirSizeLimit, e.g. 100Gi (default: instance store share)',
    )
    .option(
      '--fallback-claims',
      'with --csi: also a cache-less <name>-direct claim per Express-cached volume',
    )
    .option('--mountpoint-version <v>', 'with --csi: Mountpoint in the driver (1.24.0 from driver v2.9.0)');
}

/** The `--csi` flags (with tune's own) as core/instance's request. */
export function csiRequest(
  opts: CsiOptions & { instanceType: string; offline?: boolean },
  config: AgentConfig | undefined,
  rootFreeGiB: number,
): CsiTuneRequest {
  return {
    instanceType: opts.instanceType,
    ...(opts.offline ? {} : { ec2: ec2Client({ maxAttempts: 2, connectionTimeoutMs: 2000 }) }),
    ...(config ? { config } : {}),
    region: opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION,
    bucket: opts.bucket,
    prefix: opts.prefix,
    name: opts.name,
    access: opts.access,
    dataset: opts.dataset,
    cache: opts.cache,
    zoneIds: opts.zoneId,
    expressBucketBase: opts.expressBucketBase,
    namespace: opts.namespace,
    cacheSizeLimit: opts.cacheSizeLimit,
    mountpointVersion: opts.mountpointVersion,
    fallbackClaims: opts.fallbackClaims,
    rootFreeGiB,
  };
}

/** The manifests as a YAML stream, or one v1 List with --json; what they are for on stderr. */
export function printCsiManifests({ instance, manifests }: CsiTuneResult, json: boolean | undefined): void {
  process.stdout.write(
    json
      ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }, null, 2)}\n`
      : toYamlStream(manifests),
  );
  process.stderr.write(
    `${instance.instanceType}: ${manifests.length / 2} PV/PVC pair(s) for the Mountpoint S3 CSI driver v2 (facts: ${instance.source})\n`,
  );
}
