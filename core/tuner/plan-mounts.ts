/**
 * The tuner: the host it plans for (instance type, memory, cache volume, zone, interfaces, Mountpoint
 * release) and each mount's own settings in, one Mountpoint command line per mount process out, with the
 * reason for every setting. Pure: `tune` prints it, `up` runs it, the EKS volumes render it. The steps: the
 * host's (host-profile.ts: network, memory, cache volume, metrics), then each mount's (mount-profile.ts:
 * access, metadata TTL, local and Express cache, processes). planMounts is the same for an agent.json.
 */
import { type AgentConfig, cacheUsesLocal, METRICS_RELAY_ENDPOINT, DEFAULT_RUN_DIR } from '../contract';
import type { RenderedFlag } from './command-line';
import {
  cacheVolumeDecision,
  memoryDecision,
  memoryTargetFor,
  metricsDecisions,
  planNetwork,
  PREFETCH_DECISION,
  readPartDecision,
} from './host-profile';
import { failoverFor, planMount } from './mount-profile';
import type { MountSettings, TuningHost, TuningPlan } from './plan-types';

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

/** The whole plan: the host-wide settings first (every mount shares them), then each mount's. */
export function tuneMounts(host: TuningHost, mounts: readonly MountSettings[]): TuningPlan {
  const { instance, memory, cacheVolume } = host;
  const metricsRelay = host.metricsRelay === undefined ? METRICS_RELAY_ENDPOINT : host.metricsRelay;
  const network = planNetwork(instance, host.interfaces, mounts.length);
  const processCount = mounts.reduce((n, m) => n + (failoverFor(host, m) ? 2 : 1), 0);
  const mem = memoryTargetFor(network.perMountGbps, memory.totalMiB, processCount);
  const decisions = [
    ...network.decisions,
    ...(processCount > 0
      ? [memoryDecision(mem, memory, processCount), readPartDecision(mem), PREFETCH_DECISION]
      : []),
    cacheVolumeDecision(instance, cacheVolume),
    ...metricsDecisions(metricsRelay),
  ];

  const localMounts = mounts.filter((m) => cacheUsesLocal(m.cache)).length;
  const omitted = new Map<RenderedFlag, string>();
  const shared = {
    perMountGbps: network.perMountGbps,
    memoryTargetMiB: mem.target,
    readPartSizeBytes: mem.partMiB * 2 ** 20,
    bind: network.bind,
    localMounts,
    localShareMiB:
      cacheVolume.kind === 'none' || localMounts === 0
        ? 0
        : Math.floor(cacheVolume.capacityMiB / localMounts),
    runDir: host.runDir ?? DEFAULT_RUN_DIR,
    metricsRelay,
    omitted,
  };
  const names = mountNames(mounts.map((m) => m.path));
  const planned = mounts.map((mount, i) => planMount(host, mount, names[i], shared));

  return {
    mountpointVersion: host.mountpointVersion,
    instanceType: instance.instanceType,
    host: decisions,
    cacheVolume,
    mounts: planned,
    omittedFlags: [...omitted].map(([flag, since]) => ({ flag, since })),
  };
}

/** The host as the agent knows it, with the agent config that holds the mounts, Region and release. */
interface TuningInput extends Omit<TuningHost, 'region' | 'mountpointVersion' | 'expressBucket'> {
  readonly config: AgentConfig;
}

/** tuneMounts for an agent.json: its mounts, its Region, its Mountpoint release and this zone's Express bucket. */
export function planMounts(input: TuningInput): TuningPlan {
  const { config, ...host } = input;
  const expressBucket = host.azId ? config.expressCache?.buckets[host.azId] : undefined;
  return tuneMounts(
    {
      ...host,
      region: config.region,
      mountpointVersion: config.mountpoint.version,
      ...(expressBucket ? { expressBucket } : {}),
    },
    config.mounts,
  );
}
