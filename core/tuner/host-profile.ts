/**
 * The host-wide steps of the tuning plan: the network each mount may use (and the interfaces to bind), the
 * memory target of every Mountpoint process, the cache volume, and where the metrics go. Pure.
 */
import {
  CLOUDWATCH_AGENT_FLUSH_SECONDS,
  MOUNTPOINT_METRICS_NAMESPACE,
  OTLP_ENDPOINT,
  OTLP_EXPORT_INTERVAL_SECONDS,
} from '../contract';
import type { CacheVolume } from './cache-volume';
import type { InstanceTypeFacts } from './instance-facts';
import type { Decision, MemoryFacts } from './plan-types';

/** Mountpoint's processes together may use at most this share of memory: the rest is the job's. */
const MOUNTPOINT_MEMORY_SHARE = 0.25;
/** `--memory-target` minimum accepted by Mountpoint 1.24.0. */
export const MIN_MEMORY_TARGET_MIB = 512;
/** Mountpoint's default `--read-part-size` (8 MiB): the tuner never renders a smaller one. */
const DEFAULT_PART_MIB = 8;
/**
 * Largest part the tuner renders: AWS names 8 and 16 MB as typical ranged-GET sizes, and a larger part makes a
 * random read past a file's first MiB fetch more than it needs (the prefetcher's window starts at one part).
 */
const MAX_PART_MIB = 32;
/** Parts in flight per CRT connection that the buffers are sized for. */
const PARTS_PER_CONNECTION = 2;
/** S3's first-byte latency, the wait every ranged GET pays before data flows: "tens of milliseconds" (AWS). */
const FIRST_BYTE_SECONDS = 0.05;
/** A part should take at least this many first-byte latencies to arrive, so the wait is at most ~10 % of a GET. */
const TRANSFER_PER_LATENCY = 10;
/**
 * Data buffers one process is given at most. Mountpoint's memory use follows its throughput target and
 * open handles, not host memory; the CRT's own default buffer pool stops at 8 GiB (targets above 75 Gbps,
 * aws-c-s3), so a larger target only lets prefetch windows grow past what the network can fill.
 */
export const MAX_DATA_BUFFERS_MIB = 8192;
/** Mountpoint holds back max(128 MiB, target / 8) of --memory-target for metadata and handles (1.24.0). */
const MIN_OVERHEAD_MIB = 128;

/** An instance type's facts as the decisions quote them: their source and the type. */
function instanceFact(instance: InstanceTypeFacts): string {
  return `${instance.source} ${instance.instanceType}`;
}

interface NetworkPlan {
  /** Interfaces each process binds, one per network card; empty when the type has one card or they are unknown. */
  readonly bind: string[];
  /** `--maximum-throughput-gbps` of every process. */
  readonly perMountGbps: number;
  readonly decisions: Decision[];
}

/** Network: one process reaches one card unless it binds an interface per card; the host's bandwidth is split evenly. */
export function planNetwork(
  instance: InstanceTypeFacts,
  interfaces: readonly string[] | undefined,
  mountCount: number,
): NetworkPlan {
  const decisions: Decision[] = [];
  const cards = instance.networkCards;
  const bind =
    cards.length > 1 && interfaces && interfaces.length > 1 ? interfaces.slice(0, cards.length) : [];
  if (cards.length > 1) {
    decisions.push({
      setting: '--bind',
      value: bind.length ? bind.join(',') : '(not set)',
      reason: bind.length
        ? `spread S3 traffic over ${bind.length} interfaces on separate network cards; without it all traffic leaves through card 0`
        : interfaces
          ? `only ${interfaces.length} interface(s) with an address: attach one ENI per network card to use the others`
          : 'needs the host interface list (one ENI per network card); decided by `up` on the instance, or pass --interfaces',
      fact: `${instanceFact(instance)}: ${cards.length} network cards (${instance.networkPerformance}); Mountpoint --bind (1.9.0) is repeatable`,
    });
  }
  const usedCards = cards.slice(0, Math.max(1, bind.length));
  const perCard = (c: InstanceTypeFacts['networkCards'][number]) =>
    instance.burstable ? c.baselineGbps : c.peakGbps;
  const hostGbps = usedCards.reduce((s, c) => s + perCard(c), 0);
  const hostTarget = Math.max(1, instance.burstable ? Math.ceil(hostGbps) : Math.floor(hostGbps));
  const perMountGbps = Math.max(1, Math.floor(hostTarget / Math.max(1, mountCount)));
  decisions.push({
    setting: 'network target',
    value: `${hostTarget} Gbps for the host, ${perMountGbps} Gbps per mount`,
    reason: instance.burstable
      ? 'burstable type: sustained throughput is the baseline once credits run out, so target the baseline (rounded up to the 1 Gbps minimum)'
      : `peak bandwidth of the ${usedCards.length} card(s) Mountpoint can use, split evenly over ${mountCount} mount(s): each process takes one value and would otherwise assume the whole instance`,
    fact:
      `${instanceFact(instance)}: per card baseline ${cards[0].baselineGbps} Gbps, peak ${cards[0].peakGbps} Gbps; ` +
      'reference: --maximum-throughput-gbps is one value per process, integer >= 1',
  });
  return { bind, perMountGbps, decisions };
}

/**
 * `--read-part-size` and `--memory-target` for one process targeting `gbps`. The CRT opens about gbps/0.4
 * connections (at least 10), so each carries gbps/connections; a part is the smallest power-of-two MiB from
 * Mountpoint's 8 MiB up to MAX_PART_MIB whose transfer at that rate takes TRANSFER_PER_LATENCY first-byte
 * latencies. The buffers are PARTS_PER_CONNECTION parts per connection; while they exceed MAX_DATA_BUFFERS_MIB
 * or the memory share, the part is halved (never below 8 MiB). The target is the buffers plus the share
 * Mountpoint holds back, within MOUNTPOINT_MEMORY_SHARE of memory over `processCount` processes, and never
 * below Mountpoint's minimum.
 */
export function memoryTargetFor(gbps: number, totalMiB: number, processCount: number) {
  const connections = Math.max(10, Math.ceil(gbps / 0.4));
  const connectionMBps = (gbps * 125) / connections;
  const latencyPartMiB = (connectionMBps * 1e6 * FIRST_BYTE_SECONDS * TRANSFER_PER_LATENCY) / 2 ** 20;
  const ceiling = Math.floor((totalMiB * MOUNTPOINT_MEMORY_SHARE) / Math.max(1, processCount));
  const wantedFor = (buffers: number) => Math.max(buffers + MIN_OVERHEAD_MIB, Math.ceil((buffers * 8) / 7));
  const uncapped = (part: number) => connections * PARTS_PER_CONNECTION * part;
  let partMiB = DEFAULT_PART_MIB;
  while (partMiB < MAX_PART_MIB && partMiB < latencyPartMiB) partMiB *= 2;
  const byLatency = partMiB;
  while (
    partMiB > DEFAULT_PART_MIB &&
    (uncapped(partMiB) > MAX_DATA_BUFFERS_MIB || wantedFor(uncapped(partMiB)) > ceiling)
  )
    partMiB /= 2;
  const buffers = Math.min(uncapped(partMiB), MAX_DATA_BUFFERS_MIB);
  const wanted = wantedFor(buffers);
  return {
    connections,
    connectionMBps,
    byLatency,
    partMiB,
    buffers,
    wanted,
    ceiling,
    target: Math.max(MIN_MEMORY_TARGET_MIB, Math.min(wanted, ceiling)),
  };
}

/** GETs a sequential read of a `fileMiB` file costs: Mountpoint's 1.125 MiB first request, then whole parts. */
const getsFor = (fileMiB: number, partMiB: number) => 1 + Math.ceil((fileMiB - 1.125) / partMiB);

/** The part each ranged GET fetches: long enough that S3's first-byte wait is a small share of it. */
export function readPartDecision(mem: ReturnType<typeof memoryTargetFor>): Decision {
  const halved = mem.partMiB < mem.byLatency;
  return {
    setting: '--read-part-size',
    value: `${mem.partMiB * 2 ** 20} (${mem.partMiB} MiB)`,
    reason:
      `each of ${mem.connections} connections carries ${mem.connectionMBps.toFixed(1)} MB/s; ` +
      `a part of ${mem.byLatency} MiB takes at least ${TRANSFER_PER_LATENCY}x S3's ~${FIRST_BYTE_SECONDS * 1000} ms first-byte wait to arrive ` +
      `(from Mountpoint's ${DEFAULT_PART_MIB} MiB, doubling, at most ${MAX_PART_MIB} MiB)` +
      (halved
        ? `; halved to ${mem.partMiB} MiB so that ${PARTS_PER_CONNECTION} parts per connection stay within the memory target`
        : '') +
      (mem.partMiB > DEFAULT_PART_MIB
        ? `; fewer, longer GETs per file: a 256 MiB shard costs ${getsFor(256, mem.partMiB)} GETs instead of ${getsFor(256, DEFAULT_PART_MIB)}`
        : "; stated explicitly: Mountpoint's default"),
    fact:
      `reference: --read-part-size (1.8.0, bytes, default ${DEFAULT_PART_MIB} MiB); AWS: typical byte-range GETs are 8 or 16 MB ` +
      '(docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/use-byte-range-fetches.html), ' +
      'median latency of small requests tens of milliseconds (…/timeouts-and-retries-for-latency-sensitive-applications.html); ' +
      'measured: bench/mountpoint.ts, docs/agent.md',
  };
}

/**
 * The prefetcher, which 1.24 has no flag for: explained, left at Mountpoint's own behaviour, bounded by the
 * memory target.
 */
export const PREFETCH_DECISION: Decision = {
  setting: 'prefetch window',
  value: "Mountpoint's own (no flag)",
  reason:
    'a sequential reader gets a first GET of 1.125 MiB; the GET for the rest of the file starts once half of that is read, ' +
    'with a window of one part that doubles each time the reader waits, up to 2 GiB per open file; a larger part so starts ' +
    'with a larger window, the memory target shrinks windows under pressure, and a file of a few parts waits for S3 two or ' +
    'three times before it streams (measured: docs/agent.md)',
  fact:
    'reference: Mountpoint 1.24 source (mountpoint-s3-fs prefetch.rs, prefetch/backpressure_controller.rs): no command-line flag; ' +
    'the environment variable UNSTABLE_MOUNTPOINT_MAX_PREFETCH_WINDOW_SIZE is unstable and "may be removed at any time", so it is not set',
};

/** Memory: the buffers the throughput target keeps in flight, never more than the job can spare. */
export function memoryDecision(
  mem: ReturnType<typeof memoryTargetFor>,
  memory: MemoryFacts,
  processCount: number,
): Decision {
  const perConnection = PARTS_PER_CONNECTION * mem.partMiB;
  return {
    setting: '--memory-target',
    value: `${mem.target} MiB per process (${processCount} process(es))`,
    reason:
      `${mem.connections} connections x ${perConnection} MiB (${PARTS_PER_CONNECTION} parts of ${mem.partMiB} MiB) = ${mem.connections * perConnection} MiB of data buffers` +
      (mem.buffers < mem.connections * perConnection ? `, capped at ${MAX_DATA_BUFFERS_MIB} MiB` : '') +
      `; with Mountpoint's overhead share max(${MIN_OVERHEAD_MIB} MiB, target/8) that is ${mem.wanted} MiB; ` +
      `all Mountpoint processes stay within ${MOUNTPOINT_MEMORY_SHARE * 100}% of memory ` +
      `(${mem.ceiling} MiB each) and the job keeps the rest; Mountpoint's default would be 95% of memory` +
      (mem.target > Math.min(mem.wanted, mem.ceiling)
        ? `; raised to Mountpoint's ${MIN_MEMORY_TARGET_MIB} MiB minimum`
        : ''),
    fact:
      `${memory.source}: ${memory.totalMiB} MiB; reference: Mountpoint doc/CONFIGURATION.md (--memory-target >= 512, ` +
      'overhead max(128 MiB, target/8), default 95% of memory); buffers follow throughput, not host memory: ' +
      'the CRT opens about N/0.4 connections (>= 10), and its own default pool is 2/4/8 GiB ' +
      'for targets up to 25/75/above 75 Gbps (aws-c-s3)',
  };
}

/** The cache volume the mounts share, and the instance-store facts it rests on. */
export function cacheVolumeDecision(instance: InstanceTypeFacts, cacheVolume: CacheVolume): Decision {
  const store = instance.instanceStore;
  return {
    setting: 'cache volume',
    value:
      cacheVolume.kind === 'none'
        ? 'none'
        : `${cacheVolume.directory} (${cacheVolume.kind}, ${cacheVolume.capacityMiB} MiB)`,
    reason: cacheVolume.reason,
    fact:
      cacheVolume.kind === 'instance-store'
        ? `/sys/block/nvme*n1/device/model = "Amazon EC2 NVMe Instance Storage"${store ? `; ${instanceFact(instance)}: ${store.disks} x ${store.diskSizeGB} GB` : ''}`
        : `${instanceFact(instance)}: ${store ? 'instance store not found on this host' : 'no instance store'}`,
  };
}

/**
 * Metrics: every process exports OTLP, through the agent's relay (`relay`, null when it could not listen)
 * to the local CloudWatch agent, often enough that a stop loses little.
 */
export function metricsDecisions(relay: string | null): Decision[] {
  const cloudWatch = `the local CloudWatch agent, which publishes them to the ${MOUNTPOINT_METRICS_NAMESPACE} namespace`;
  return [
    relay
      ? {
          setting: '--otlp-endpoint',
          value: `${relay}/mounts/<mount>/<role>`,
          reason:
            `Mountpoint metrics (S3 requests, cache hits, latency and errors) go to the agent's relay, one path per process, which counts them per mount ` +
            `(status --json, bench train, warm) and passes each export on unchanged to ${cloudWatch} at ${OTLP_ENDPOINT}; Mountpoint's exports carry no mount of their own`,
          fact: 'reference: --otlp-endpoint stable since 1.21.0, Mountpoint appends /v1/metrics to the path; CloudWatch agent >= 1.300060.0 listens on 127.0.0.1:4318',
        }
      : {
          setting: '--otlp-endpoint',
          value: OTLP_ENDPOINT,
          reason: `Mountpoint metrics go straight to ${cloudWatch}; the agent's relay could not listen, so nothing is counted per mount`,
          fact: 'reference: --otlp-endpoint stable since 1.21.0; CloudWatch agent >= 1.300060.0 listens on 127.0.0.1:4318',
        },
    {
      setting: '--otlp-export-interval',
      value: `${OTLP_EXPORT_INTERVAL_SECONDS} s`,
      reason:
        `Mountpoint sends nothing at exit, so a stop loses at most ${OTLP_EXPORT_INTERVAL_SECONDS} s of each mount's metrics instead of the default 60 s; ` +
        `the CloudWatch agent still calls PutMetricData every ${CLOUDWATCH_AGENT_FLUSH_SECONDS} s with up to 1,000 datapoints, so the shorter interval adds datapoints, not calls, while a minute of them fits in one`,
      fact: "reference: --otlp-export-interval (1.21.0, default 60 s); the agent's force_flush_interval sets its PutMetricData rate",
    },
  ];
}
