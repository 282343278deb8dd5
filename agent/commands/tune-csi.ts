/**
 * `mountfleet tune --csi`: the static PV/PVC pairs for the Mountpoint S3 CSI driver v2, tuned for the
 * instance type exactly as the MountpointCsiVolumes construct renders them, for users who apply
 * manifests themselves. Volumes come from --bucket (one volume) or from the agent config's mounts.
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../../core/common';
import {
  AZ_ID_PATTERN,
  BUCKET_NAME_PATTERN,
  CACHE_POLICIES,
  DIRECTORY_BUCKET_NAME_PATTERN,
  parseAgentConfig,
  type AgentConfig,
  checkMountPrefix,
} from '../../core/contract';
import {
  csiInputProblems,
  planCsiClaims,
  renderCsiManifests,
  toYamlStream,
  type CsiVolumeSpec,
  mountNames,
} from '../../core/tuner';
import { ec2Client } from '../../core/aws';
import { lookupNamedInstanceType, EXAMPLE_CONFIG } from '../../core/instance';

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

/** Volumes, Express buckets and region from the flags, else from the agent config (or the example). */
function csiSources(opts: CsiOptions, config: AgentConfig) {
  const given = (['prefix', 'name', 'access', 'dataset', 'cache'] as const).filter(
    (k) => opts[k] !== undefined,
  );
  if (!opts.bucket && given.length)
    throw new UsageError(`--${given[0]} describes a volume: give --bucket too`);
  let volumes: CsiVolumeSpec[];
  if (opts.bucket) {
    if (!BUCKET_NAME_PATTERN.test(opts.bucket))
      throw new UsageError(
        `--bucket "${opts.bucket}": must be an S3 bucket name (3-63 lower-case characters)`,
      );
    const prefixProblem = checkMountPrefix(opts.prefix ?? '');
    if (prefixProblem) throw new UsageError(`--prefix: ${prefixProblem}`);
    volumes = [
      {
        name: opts.name ?? opts.bucket.replace(/\./g, '-'),
        bucket: opts.bucket,
        ...(opts.prefix ? { prefix: opts.prefix } : {}),
        ...(opts.access ? { access: opts.access } : {}),
        ...(opts.dataset ? { dataset: opts.dataset } : {}),
        ...(opts.cache ? { cache: opts.cache } : {}),
      },
    ];
  } else {
    const names = mountNames(config.mounts.map((m) => m.path));
    volumes = config.mounts.map((m, i) => ({ ...m, name: names[i].replace(/[_.]/g, '-') }));
  }
  let expressBuckets: Record<string, string> = config.expressCache?.buckets ?? {};
  if (opts.bucket) expressBuckets = {};
  if (opts.zoneId.length || opts.expressBucketBase) {
    if (!opts.zoneId.length || !opts.expressBucketBase)
      throw new UsageError(
        '--zone-id and --express-bucket-base go together, e.g. --zone-id use1-az4 --express-bucket-base ml-cache',
      );
    expressBuckets = {};
    for (const azId of opts.zoneId) {
      if (!AZ_ID_PATTERN.test(azId))
        throw new UsageError(
          `--zone-id "${azId}": must be a zone ID such as use1-az4 (not a zone name like us-east-1a)`,
        );
      const bucket = `${opts.expressBucketBase}--${azId}--x-s3`;
      if (!DIRECTORY_BUCKET_NAME_PATTERN.test(bucket) || bucket.length > 63)
        throw new UsageError(
          `--express-bucket-base "${opts.expressBucketBase}": ${bucket} is not a directory bucket name`,
        );
      expressBuckets[azId] = bucket;
    }
  }
  const region = opts.bucket
    ? (opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION)
    : config.region;
  if (!region)
    throw new UsageError(
      '--csi --bucket needs a region for the mount options: pass --region, e.g. --region us-east-1, or set AWS_REGION',
    );
  return { volumes, expressBuckets, region };
}

/** Prints the manifests (YAML stream, or one v1 List with --json); every problem is a usage error. */
export async function printCsiManifests(
  opts: CsiOptions & { instanceType: string; offline?: boolean; json?: boolean },
  config: AgentConfig | undefined,
  rootFreeGiB: number,
): Promise<void> {
  const instance = await lookupNamedInstanceType(
    opts.instanceType,
    opts.offline ? undefined : ec2Client({ maxAttempts: 2, connectionTimeoutMs: 2000 }),
  );
  const { volumes, expressBuckets, region } = csiSources(
    opts,
    config ?? parseAgentConfig(EXAMPLE_CONFIG, '(example)'),
  );
  const input = {
    instance,
    region,
    namespace: opts.namespace,
    volumes,
    expressBuckets,
    rootFreeGiB,
    ...(opts.cacheSizeLimit !== undefined ? { cacheSizeLimit: opts.cacheSizeLimit } : {}),
    ...(opts.mountpointVersion !== undefined ? { mountpointVersion: opts.mountpointVersion } : {}),
    ...(opts.fallbackClaims ? { fallbackClaims: true } : {}),
  };
  const [problem] = csiInputProblems(input);
  if (problem) throw new UsageError(`${problem.field}: ${problem.problem} — ${problem.fix}`);
  const docs = renderCsiManifests(planCsiClaims(input), opts.namespace);
  process.stdout.write(
    opts.json
      ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }, null, 2)}\n`
      : toYamlStream(docs),
  );
  process.stderr.write(
    `${instance.instanceType}: ${docs.length / 2} PV/PVC pair(s) for the Mountpoint S3 CSI driver v2 (facts: ${instance.source})\n`,
  );
}
