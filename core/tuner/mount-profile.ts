/**
 * The per-mount steps of the tuning plan: what the mount may do to objects, how long metadata is trusted, its
 * share of the local cache, the Express cache, and the one or two Mountpoint processes that serve it. Pure.
 */
import { join } from 'node:path';
import {
  cacheUsesExpress,
  cacheUsesLocal,
  mountReplacesObjects,
  OTLP_ENDPOINT,
  OTLP_EXPORT_INTERVAL_SECONDS,
  relayProcessEndpoint,
} from '../contract';
import {
  renderCommandLine,
  type MetadataTtl,
  type MountpointOptions,
  type RenderedFlag,
} from './command-line';
import type { Decision, MountPlan, MountSettings, ProcessPlan, ProcessRole, TuningHost } from './plan-types';

/** TTL for mutable datasets with a data cache: Mountpoint's own default with --cache, stated explicitly. */
const MUTABLE_METADATA_TTL_SECONDS = 60;
/** Share of a failover mount's local cache given to the Express-cached process (the standby gets the rest). */
const PRIMARY_CACHE_SHARE = 0.75;
/**
 * AWS_MAX_ATTEMPTS for the Express-cached process. Mountpoint uses one client for the cache and the
 * source bucket (default 10 attempts, ~55 s of backoff): handles held on that process while the zone is
 * dark wait out every attempt per block. New opens go to the standby, which keeps the default.
 */
const EXPRESS_PROCESS_MAX_ATTEMPTS = 5;

/** What the host-wide steps settle for every mount. */
interface SharedSettings {
  readonly perMountGbps: number;
  readonly memoryTargetMiB: number;
  readonly readPartSizeBytes: number;
  readonly bind: readonly string[];
  /** The local cache each locally cached mount gets, and how many such mounts there are. */
  readonly localShareMiB: number;
  readonly localMounts: number;
  readonly runDir: string;
  /** Where each process exports its metrics: the agent's relay, or null for the CloudWatch agent directly. */
  readonly metricsRelay: string | null;
  /** Collects the flags the pinned release lacks, with the first release that has each. */
  readonly omitted: Map<RenderedFlag, string>;
}

/** A mount gets the two-process failover pair when it wants the Express cache and the zone has a bucket. */
export function failoverFor(host: TuningHost, mount: MountSettings): boolean {
  return cacheUsesExpress(mount.cache) && Boolean(host.expressBucket);
}

/** One mount's settings, each with its reason, and the processes that serve it. */
export function planMount(
  host: TuningHost,
  mount: MountSettings,
  name: string,
  shared: SharedSettings,
): MountPlan {
  const expressBucket = host.expressBucket;
  const failover = failoverFor(host, mount);
  const ttl = metadataTtlFor(mount);
  const localMiB = cacheUsesLocal(mount.cache) ? shared.localShareMiB : 0;
  const decisions: Decision[] = [
    accessDecision(mount),
    ALLOW_OTHER_DECISION,
    metadataTtlDecision(mount, ttl),
    localCacheDecision(mount, localMiB, shared.localMounts, failover),
    expressCacheDecision(host, mount, failover),
  ];
  if (failover) decisions.push(EXPRESS_ATTEMPTS_DECISION);
  const processes = mountProcesses(host, {
    name,
    mount,
    shared,
    localMiB,
    base: baseOptions(host, mount, shared, ttl),
    expressBucket: failover ? expressBucket : undefined,
  });
  return { name, mount, failover, ...(failover ? { expressBucket } : {}), processes, decisions };
}

/** What the mount may do to objects: nothing (read-only), add new ones, or also replace and delete them. */
function accessDecision(mount: MountSettings): Decision {
  const readOnly = mount.access === 'read-only';
  const replaces = mountReplacesObjects(mount.access, mount.dataset);
  return {
    setting: readOnly
      ? '--read-only'
      : replaces
        ? '--allow-overwrite --allow-delete'
        : '(writes: new files only)',
    value: mount.access,
    reason: readOnly
      ? 'declared read-only: the kernel refuses writes before they reach S3'
      : replaces
        ? 'read-write mutable dataset: replacing and deleting objects is expected'
        : 'read-write immutable dataset: objects are written once, so overwrite and delete stay refused',
    fact: 'agent.json mounts[].access/dataset; reference: --allow-delete, --allow-overwrite (1.4.0), --read-only',
  };
}

const ALLOW_OTHER_DECISION: Decision = {
  setting: '--allow-other',
  value: 'set',
  reason: 'the agent mounts as root; jobs run as other users and could not open files otherwise',
  fact: 'reference: --allow-other (needs user_allow_other only for non-root)',
};

/** How long metadata is trusted: re-checked on every open without a cache, a minute if mutable, else for ever. */
function metadataTtlFor(mount: MountSettings): MetadataTtl {
  if (mount.cache === 'none') return 'minimal';
  return mount.dataset === 'mutable' ? MUTABLE_METADATA_TTL_SECONDS : 'indefinite';
}

function metadataTtlDecision(mount: MountSettings, ttl: MetadataTtl): Decision {
  return {
    setting: '--metadata-ttl',
    value: String(ttl),
    reason:
      mount.cache === 'none'
        ? 'cache policy none: re-validate metadata on every open'
        : mount.dataset === 'mutable'
          ? `mutable dataset: changes become visible within ${MUTABLE_METADATA_TTL_SECONDS} s`
          : 'immutable dataset: no HeadObject per open ("epoch 1 is faster too")',
    fact: 'agent.json mounts[].dataset/cache; reference: --metadata-ttl (1.2.0) SECONDS|indefinite|minimal',
  };
}

function localCacheDecision(
  mount: MountSettings,
  localMiB: number,
  localMounts: number,
  failover: boolean,
): Decision {
  return {
    setting: '--cache --max-cache-size',
    value: localMiB ? `${localMiB} MiB` : '(not set)',
    reason: !cacheUsesLocal(mount.cache)
      ? `cache policy ${mount.cache}: no local data cache`
      : localMiB
        ? `an equal share of the cache volume for each of ${localMounts} locally cached mount(s), explicit so the job's disk is never filled` +
          (failover
            ? `; ${PRIMARY_CACHE_SHARE * 100}% to the Express-cached process, the rest to the standby`
            : '')
        : 'no cache volume on this host',
    fact: 'reference: --cache (1.2.0) deletes its directory at mount and exit; --max-cache-size in MiB',
  };
}

function expressCacheDecision(host: TuningHost, mount: MountSettings, failover: boolean): Decision {
  const { azId, expressBucket, expressProbe } = host;
  return {
    setting: '--cache-xz',
    value: failover ? expressBucket! : '(not set)',
    reason: !cacheUsesExpress(mount.cache)
      ? `cache policy ${mount.cache}: no shared cache`
      : !expressBucket
        ? `no Express bucket configured for zone ${azId ?? '(unknown)'}`
        : expressProbe && !expressProbe.healthy
          ? `zone bucket failed the pre-mount probe (${expressProbe.detail}): start on the cache-less standby, switch when it recovers`
          : 'the zone bucket, on a primary process; a cache-less standby takes new opens within seconds if the zone goes dark',
    fact: `agent.json expressCache.buckets[${azId ?? '?'}]; reference: --cache-xz (1.11.0), a mount started while the zone is down fails after 30 s`,
  };
}

const EXPRESS_ATTEMPTS_DECISION: Decision = {
  setting: 'AWS_MAX_ATTEMPTS',
  value: `${EXPRESS_PROCESS_MAX_ATTEMPTS} (Express-cached process), default 10 (standby)`,
  reason:
    'bounds how long handles held on the Express-cached process stall per block while the zone is dark; new opens move to the standby',
  fact: 'reference: AWS_MAX_ATTEMPTS (default 10) applies to the source bucket and the Express cache alike',
};

/** The options every process of the mount shares. */
function baseOptions(host: TuningHost, mount: MountSettings, shared: SharedSettings, ttl: MetadataTtl) {
  const replaces = mountReplacesObjects(mount.access, mount.dataset);
  return {
    bucket: mount.bucket,
    region: host.region,
    ...(mount.expectedBucketOwner ? { expectedBucketOwner: mount.expectedBucketOwner } : {}),
    ...(mount.prefix ? { prefix: mount.prefix } : {}),
    readOnly: mount.access === 'read-only',
    allowOverwrite: replaces,
    allowDelete: replaces,
    allowOther: true,
    maximumThroughputGbps: shared.perMountGbps,
    memoryTargetMiB: shared.memoryTargetMiB,
    readPartSizeBytes: shared.readPartSizeBytes,
    metadataTtl: ttl,
    bind: shared.bind,
    otlpExportIntervalSeconds: OTLP_EXPORT_INTERVAL_SECONDS,
  } satisfies Partial<MountpointOptions>;
}

/**
 * The mount's processes: one at the user's path, or with failover an Express-cached primary and a cache-less
 * standby in the run directory (the agent switches the user's path between them), the local cache split
 * PRIMARY_CACHE_SHARE to the primary.
 */
function mountProcesses(
  host: TuningHost,
  m: {
    readonly name: string;
    readonly mount: MountSettings;
    readonly shared: SharedSettings;
    readonly localMiB: number;
    readonly base: Omit<MountpointOptions, 'mountPoint'>;
    /** Set for a failover mount. */
    readonly expressBucket?: string;
  },
): ProcessPlan[] {
  const { cacheVolume } = host;
  const version = host.mountpointVersion;
  const processes: ProcessPlan[] = [];
  const make = (role: ProcessRole, mountPoint: string, extra: Partial<MountpointOptions>, env = {}) => {
    const cacheDirectory =
      cacheVolume.kind !== 'none' && m.localMiB
        ? { cacheDirectory: join(cacheVolume.directory, m.name, role) }
        : {};
    const relay = m.shared.metricsRelay;
    const otlpEndpoint = relay ? relayProcessEndpoint(relay, m.name, role) : OTLP_ENDPOINT;
    const options: MountpointOptions = { ...m.base, ...cacheDirectory, ...extra, otlpEndpoint, mountPoint };
    const rendered = renderCommandLine(options, version);
    rendered.omitted.forEach((o) => m.shared.omitted.set(o.flag, o.since));
    processes.push({ role, mountPoint, options, args: rendered.args, environment: env });
  };
  if (!m.expressBucket) {
    make('main', m.mount.path, m.localMiB ? { maxCacheSizeMiB: m.localMiB } : {});
    return processes;
  }
  const primaryMiB = Math.floor(m.localMiB * PRIMARY_CACHE_SHARE);
  make(
    'xz',
    join(m.shared.runDir, m.name, 'xz'),
    { cacheXzBucket: m.expressBucket, ...(m.localMiB ? { maxCacheSizeMiB: primaryMiB } : {}) },
    { AWS_MAX_ATTEMPTS: String(EXPRESS_PROCESS_MAX_ATTEMPTS) },
  );
  make(
    'direct',
    join(m.shared.runDir, m.name, 'direct'),
    m.localMiB ? { maxCacheSizeMiB: m.localMiB - primaryMiB } : {},
  );
  return processes;
}
