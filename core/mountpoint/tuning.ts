/**
 * Turns facts (instance type, memory, cache volume, zone, interfaces) and the agent config into one
 * Mountpoint command line per mount process, with the reason for every setting. Pure: `tune` prints it,
 * `up` runs it.
 */
import { join } from 'node:path';
import type { AgentConfig, MountConfig } from '../config';
import {
  CLOUDWATCH_AGENT_FLUSH_SECONDS,
  MOUNTPOINT_METRICS_NAMESPACE,
  OTLP_EXPORT_INTERVAL_SECONDS,
} from '../metrics';
import type { CacheVolume } from './cache-volume';
import {
  renderCommandLine,
  type MetadataTtl,
  type MountpointOptions,
  type RenderedFlag,
} from './command-line';
import type { MemoryFacts } from './host';
import type { InstanceTypeFacts } from './instance-type-facts';

export const DEFAULT_RUN_DIR = '/run/mountfleet';
export const OTLP_ENDPOINT = 'http://127.0.0.1:4318';
/** Mountpoint's processes together may use at most this share of memory: the rest is the job's. */
export const MOUNTPOINT_MEMORY_SHARE = 0.25;
/** `--memory-target` minimum accepted by Mountpoint 1.24.0. */
export const MIN_MEMORY_TARGET_MIB = 512;
/** Buffers per CRT connection: two 8 MiB parts in flight (default part size 8 MiB). */
export const MIB_PER_CONNECTION = 16;
/**
 * Data buffers one process is given at most. Mountpoint's memory use follows its throughput target and
 * open handles, not host memory; the CRT's own default buffer pool stops at 8 GiB (targets above 75 Gbps,
 * aws-c-s3), so a larger target only lets prefetch windows grow past what the network can fill.
 */
export const MAX_DATA_BUFFERS_MIB = 8192;
/** Mountpoint holds back max(128 MiB, target / 8) of --memory-target for metadata and handles (1.24.0). */
export const MIN_OVERHEAD_MIB = 128;
/** TTL for mutable datasets with a data cache: Mountpoint's own default with --cache, stated explicitly. */
export const MUTABLE_METADATA_TTL_SECONDS = 60;
/** Share of a failover mount's local cache given to the Express-cached process (the standby gets the rest). */
export const PRIMARY_CACHE_SHARE = 0.75;
/**
 * AWS_MAX_ATTEMPTS for the Express-cached process. Mountpoint uses one client for the cache and the
 * source bucket (default 10 attempts, ~55 s of backoff): handles held on that process while the zone is
 * dark wait out every attempt per block. New opens go to the standby, which keeps the default.
 */
export const EXPRESS_PROCESS_MAX_ATTEMPTS = 5;

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

/** /mnt/data/train → mnt-data-train; a numeric suffix separates paths that would collide. */
export function mountNames(paths: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return paths.map((p) => {
    const base =
      p
        .replace(/^\/+|\/+$/g, '')
        .replace(/[^A-Za-z0-9_.]+/g, '-')
        .toLowerCase() || 'root';
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}-${n}`;
  });
}

const usesLocalCache = (m: MountConfig) => m.cache === 'local' || m.cache === 'local+express';
const usesExpress = (m: MountConfig) => m.cache === 'express' || m.cache === 'local+express';

export function planMounts(input: TuningInput): TuningPlan {
  const { config, instance, memory, cacheVolume } = input;
  const version = config.mountpoint.version;
  const runDir = input.runDir ?? DEFAULT_RUN_DIR;
  const host: Decision[] = [];
  const mounts = config.mounts;
  const itFact = `${instance.source} ${instance.instanceType}`;

  // Network: one process reaches one card unless it binds an interface per card.
  const cards = instance.networkCards;
  const bind =
    cards.length > 1 && input.interfaces && input.interfaces.length > 1
      ? input.interfaces.slice(0, cards.length)
      : [];
  if (cards.length > 1) {
    host.push({
      setting: '--bind',
      value: bind.length ? bind.join(',') : '(not set)',
      reason: bind.length
        ? `spread S3 traffic over ${bind.length} interfaces on separate network cards; without it all traffic leaves through card 0`
        : input.interfaces
          ? `only ${input.interfaces.length} interface(s) with an address: attach one ENI per network card to use the others`
          : 'needs the host interface list (one ENI per network card); decided by `up` on the instance, or pass --interfaces',
      fact: `${itFact}: ${cards.length} network cards (${instance.networkPerformance}); Mountpoint --bind (1.9.0) is repeatable`,
    });
  }
  const usedCards = cards.slice(0, Math.max(1, bind.length));
  const perCard = (c: InstanceTypeFacts['networkCards'][number]) =>
    instance.burstable ? c.baselineGbps : c.peakGbps;
  const hostGbps = usedCards.reduce((s, c) => s + perCard(c), 0);
  const hostTarget = Math.max(1, instance.burstable ? Math.ceil(hostGbps) : Math.floor(hostGbps));
  const perMountGbps = Math.max(1, Math.floor(hostTarget / Math.max(1, mounts.length)));
  host.push({
    setting: 'network target',
    value: `${hostTarget} Gbps for the host, ${perMountGbps} Gbps per mount`,
    reason: instance.burstable
      ? 'burstable type: sustained throughput is the baseline once credits run out, so target the baseline (rounded up to the 1 Gbps minimum)'
      : `peak bandwidth of the ${usedCards.length} card(s) Mountpoint can use, split evenly over ${mounts.length} mount(s): each process takes one value and would otherwise assume the whole instance`,
    fact:
      `${itFact}: per card baseline ${cards[0].baselineGbps} Gbps, peak ${cards[0].peakGbps} Gbps; ` +
      'reference: --maximum-throughput-gbps is one value per process, integer >= 1',
  });

  // Memory: the buffers the throughput target keeps in flight, never more than the job can spare.
  const processCount = mounts.reduce((n, m) => n + (failoverFor(input, m) ? 2 : 1), 0);
  const mem = memoryTargetFor(perMountGbps, memory.totalMiB, processCount);
  if (processCount > 0) {
    host.push({
      setting: '--memory-target',
      value: `${mem.target} MiB per process (${processCount} process(es))`,
      reason:
        `${mem.connections} connections x ${MIB_PER_CONNECTION} MiB = ${mem.connections * MIB_PER_CONNECTION} MiB of data buffers` +
        (mem.buffers < mem.connections * MIB_PER_CONNECTION
          ? `, capped at ${MAX_DATA_BUFFERS_MIB} MiB`
          : '') +
        `; with Mountpoint's overhead share max(${MIN_OVERHEAD_MIB} MiB, target/8) that is ${mem.wanted} MiB; ` +
        `all Mountpoint processes stay within ${MOUNTPOINT_MEMORY_SHARE * 100}% of memory ` +
        `(${mem.ceiling} MiB each) and the job keeps the rest; Mountpoint's default would be 95% of memory` +
        (mem.target > Math.min(mem.wanted, mem.ceiling)
          ? `; raised to Mountpoint's ${MIN_MEMORY_TARGET_MIB} MiB minimum`
          : ''),
      fact:
        `${memory.source}: ${memory.totalMiB} MiB; reference: Mountpoint doc/CONFIGURATION.md (--memory-target >= 512, ` +
        'overhead max(128 MiB, target/8), default 95% of memory); buffers follow throughput, not host memory: ' +
        'the CRT opens about N/0.4 connections (>= 10) with 8 MiB parts, and its own default pool is 2/4/8 GiB ' +
        'for targets up to 25/75/above 75 Gbps (aws-c-s3)',
    });
  }
  host.push({
    setting: 'cache volume',
    value:
      cacheVolume.kind === 'none'
        ? 'none'
        : `${cacheVolume.directory} (${cacheVolume.kind}, ${cacheVolume.capacityMiB} MiB)`,
    reason: cacheVolume.reason,
    fact:
      cacheVolume.kind === 'instance-store'
        ? `/sys/block/nvme*n1/device/model = "Amazon EC2 NVMe Instance Storage"${instance.instanceStore ? `; ${itFact}: ${instance.instanceStore.disks} x ${instance.instanceStore.diskSizeGB} GB` : ''}`
        : `${itFact}: ${instance.instanceStore ? 'instance store not found on this host' : 'no instance store'}`,
  });
  host.push({
    setting: '--otlp-endpoint',
    value: OTLP_ENDPOINT,
    reason: `Mountpoint metrics (cache hits, S3 latency and errors) go to the local CloudWatch agent, which publishes them to the ${MOUNTPOINT_METRICS_NAMESPACE} namespace`,
    fact: 'reference: --otlp-endpoint stable since 1.21.0; CloudWatch agent >= 1.300060.0 listens on 127.0.0.1:4318',
  });
  host.push({
    setting: '--otlp-export-interval',
    value: `${OTLP_EXPORT_INTERVAL_SECONDS} s`,
    reason:
      `Mountpoint sends nothing at exit, so a stop loses at most ${OTLP_EXPORT_INTERVAL_SECONDS} s of each mount's metrics instead of the default 60 s; ` +
      `the CloudWatch agent still calls PutMetricData every ${CLOUDWATCH_AGENT_FLUSH_SECONDS} s with up to 1,000 datapoints, so the shorter interval adds datapoints, not calls, while a minute of them fits in one`,
    fact: "reference: --otlp-export-interval (1.21.0, default 60 s); the agent's force_flush_interval sets its PutMetricData rate",
  });

  const localMounts = mounts.filter(usesLocalCache).length;
  const localShareMiB =
    cacheVolume.kind === 'none' || localMounts === 0 ? 0 : Math.floor(cacheVolume.capacityMiB / localMounts);
  const names = mountNames(mounts.map((m) => m.path));
  const omitted = new Map<RenderedFlag, string>();

  const planned = mounts.map((mount, i): MountPlan => {
    const name = names[i];
    const decisions: Decision[] = [];
    const expressBucket = input.azId ? config.expressCache?.buckets[input.azId] : undefined;
    const failover = failoverFor(input, mount);
    const readOnly = mount.access === 'read-only';
    const mutable = mount.dataset === 'mutable';

    decisions.push({
      setting: readOnly
        ? '--read-only'
        : mutable
          ? '--allow-overwrite --allow-delete'
          : '(writes: new files only)',
      value: mount.access,
      reason: readOnly
        ? 'declared read-only: the kernel refuses writes before they reach S3'
        : mutable
          ? 'read-write mutable dataset: replacing and deleting objects is expected'
          : 'read-write immutable dataset: objects are written once, so overwrite and delete stay refused',
      fact: 'agent.json mounts[].access/dataset; reference: --allow-delete, --allow-overwrite (1.4.0), --read-only',
    });
    decisions.push({
      setting: '--allow-other',
      value: 'set',
      reason: 'the agent mounts as root; jobs run as other users and could not open files otherwise',
      fact: 'reference: --allow-other (needs user_allow_other only for non-root)',
    });
    const ttl: MetadataTtl =
      mount.cache === 'none' ? 'minimal' : mutable ? MUTABLE_METADATA_TTL_SECONDS : 'indefinite';
    decisions.push({
      setting: '--metadata-ttl',
      value: String(ttl),
      reason:
        mount.cache === 'none'
          ? 'cache policy none: re-validate metadata on every open'
          : mutable
            ? `mutable dataset: changes become visible within ${MUTABLE_METADATA_TTL_SECONDS} s`
            : 'immutable dataset: no HeadObject per open ("epoch 1 is faster too")',
      fact: 'agent.json mounts[].dataset/cache; reference: --metadata-ttl (1.2.0) SECONDS|indefinite|minimal',
    });
    const localMiB = usesLocalCache(mount) ? localShareMiB : 0;
    decisions.push({
      setting: '--cache --max-cache-size',
      value: localMiB ? `${localMiB} MiB` : '(not set)',
      reason: !usesLocalCache(mount)
        ? `cache policy ${mount.cache}: no local data cache`
        : localMiB
          ? `an equal share of the cache volume for each of ${localMounts} locally cached mount(s), explicit so the job's disk is never filled` +
            (failover
              ? `; ${PRIMARY_CACHE_SHARE * 100}% to the Express-cached process, the rest to the standby`
              : '')
          : 'no cache volume on this host',
      fact: 'reference: --cache (1.2.0) deletes its directory at mount and exit; --max-cache-size in MiB',
    });
    decisions.push({
      setting: '--cache-xz',
      value: failover ? expressBucket! : '(not set)',
      reason: !usesExpress(mount)
        ? `cache policy ${mount.cache}: no shared cache`
        : !expressBucket
          ? `no Express bucket configured for zone ${input.azId ?? '(unknown)'}`
          : input.expressProbe && !input.expressProbe.healthy
            ? `zone bucket failed the pre-mount probe (${input.expressProbe.detail}): start on the cache-less standby, switch when it recovers`
            : 'the zone bucket, on a primary process; a cache-less standby takes new opens within seconds if the zone goes dark',
      fact: `agent.json expressCache.buckets[${input.azId ?? '?'}]; reference: --cache-xz (1.11.0), a mount started while the zone is down fails after 30 s`,
    });

    const base = {
      bucket: mount.bucket,
      region: config.region,
      ...(mount.expectedBucketOwner ? { expectedBucketOwner: mount.expectedBucketOwner } : {}),
      ...(mount.prefix ? { prefix: mount.prefix } : {}),
      readOnly,
      allowOverwrite: !readOnly && mutable,
      allowDelete: !readOnly && mutable,
      allowOther: true,
      maximumThroughputGbps: perMountGbps,
      memoryTargetMiB: mem.target,
      metadataTtl: ttl,
      bind,
      otlpEndpoint: OTLP_ENDPOINT,
      otlpExportIntervalSeconds: OTLP_EXPORT_INTERVAL_SECONDS,
    } satisfies Partial<MountpointOptions>;
    const cacheDir = (role: ProcessRole) =>
      cacheVolume.kind !== 'none' && localMiB
        ? { cacheDirectory: join(cacheVolume.directory, name, role) }
        : {};
    const processes: ProcessPlan[] = [];
    const make = (role: ProcessRole, mountPoint: string, extra: Partial<MountpointOptions>, env = {}) => {
      const options: MountpointOptions = { ...base, ...cacheDir(role), ...extra, mountPoint };
      const rendered = renderCommandLine(options, version);
      rendered.omitted.forEach((o) => omitted.set(o.flag, o.since));
      processes.push({ role, mountPoint, options, args: rendered.args, environment: env });
    };
    if (failover) {
      const primaryMiB = Math.floor(localMiB * PRIMARY_CACHE_SHARE);
      make(
        'xz',
        join(runDir, name, 'xz'),
        { cacheXzBucket: expressBucket, ...(localMiB ? { maxCacheSizeMiB: primaryMiB } : {}) },
        { AWS_MAX_ATTEMPTS: String(EXPRESS_PROCESS_MAX_ATTEMPTS) },
      );
      make(
        'direct',
        join(runDir, name, 'direct'),
        localMiB ? { maxCacheSizeMiB: localMiB - primaryMiB } : {},
      );
      decisions.push({
        setting: 'AWS_MAX_ATTEMPTS',
        value: `${EXPRESS_PROCESS_MAX_ATTEMPTS} (Express-cached process), default 10 (standby)`,
        reason:
          'bounds how long handles held on the Express-cached process stall per block while the zone is dark; new opens move to the standby',
        fact: 'reference: AWS_MAX_ATTEMPTS (default 10) applies to the source bucket and the Express cache alike',
      });
    } else {
      make('main', mount.path, localMiB ? { maxCacheSizeMiB: localMiB } : {});
    }
    return { name, mount, failover, ...(failover ? { expressBucket } : {}), processes, decisions };
  });

  return {
    mountpointVersion: version,
    instanceType: instance.instanceType,
    host,
    cacheVolume,
    mounts: planned,
    omittedFlags: [...omitted].map(([flag, since]) => ({ flag, since })),
  };
}

/**
 * `--memory-target` for one process targeting `gbps`: its connections' part buffers (at most
 * MAX_DATA_BUFFERS_MIB) plus the share Mountpoint holds back, within MOUNTPOINT_MEMORY_SHARE of memory over
 * `processCount` processes, and never below Mountpoint's minimum.
 */
export function memoryTargetFor(gbps: number, totalMiB: number, processCount: number) {
  const connections = Math.max(10, Math.ceil(gbps / 0.4));
  const buffers = Math.min(connections * MIB_PER_CONNECTION, MAX_DATA_BUFFERS_MIB);
  const wanted = Math.max(buffers + MIN_OVERHEAD_MIB, Math.ceil((buffers * 8) / 7));
  const ceiling = Math.floor((totalMiB * MOUNTPOINT_MEMORY_SHARE) / Math.max(1, processCount));
  return {
    connections,
    buffers,
    wanted,
    ceiling,
    target: Math.max(MIN_MEMORY_TARGET_MIB, Math.min(wanted, ceiling)),
  };
}

/** A mount gets the two-process failover pair when it wants the Express cache and the zone has a bucket. */
function failoverFor(input: TuningInput, mount: MountConfig): boolean {
  return usesExpress(mount) && Boolean(input.azId && input.config.expressCache?.buckets[input.azId]);
}
