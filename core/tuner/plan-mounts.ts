/**
 * Turns facts (instance type, memory, cache volume, zone, interfaces) and the agent config into one
 * Mountpoint command line per mount process, with the reason for every setting. Pure: `tune` prints it,
 * `up` runs it. The steps: the host's (tuning-host.ts: network, memory, cache volume, metrics), then each
 * mount's (tuning-mount.ts: access, metadata TTL, local and Express cache, processes).
 */
import { cacheUsesLocal, METRICS_RELAY_ENDPOINT, DEFAULT_RUN_DIR } from '../contract';
import type { RenderedFlag } from './command-line';
import {
  cacheVolumeDecision,
  memoryDecision,
  memoryTargetFor,
  metricsDecisions,
  planNetwork,
} from './host-profile';
import { failoverFor, planMount } from './mount-profile';
import type { TuningInput, TuningPlan } from './plan-types';

export type { Decision, MountPlan, ProcessPlan, ProcessRole, TuningInput, TuningPlan } from './plan-types';

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
export function planMounts(input: TuningInput): TuningPlan {
  const { config, instance, memory, cacheVolume } = input;
  const mounts = config.mounts;

  const metricsRelay = input.metricsRelay === undefined ? METRICS_RELAY_ENDPOINT : input.metricsRelay;
  const network = planNetwork(instance, input.interfaces, mounts.length);
  const processCount = mounts.reduce((n, m) => n + (failoverFor(input, m) ? 2 : 1), 0);
  const mem = memoryTargetFor(network.perMountGbps, memory.totalMiB, processCount);
  const host = [
    ...network.decisions,
    ...(processCount > 0 ? [memoryDecision(mem, memory, processCount)] : []),
    cacheVolumeDecision(instance, cacheVolume),
    ...metricsDecisions(metricsRelay),
  ];

  const localMounts = mounts.filter((m) => cacheUsesLocal(m.cache)).length;
  const omitted = new Map<RenderedFlag, string>();
  const shared = {
    perMountGbps: network.perMountGbps,
    memoryTargetMiB: mem.target,
    bind: network.bind,
    localMounts,
    localShareMiB:
      cacheVolume.kind === 'none' || localMounts === 0
        ? 0
        : Math.floor(cacheVolume.capacityMiB / localMounts),
    runDir: input.runDir ?? DEFAULT_RUN_DIR,
    metricsRelay,
    omitted,
  };
  const names = mountNames(mounts.map((m) => m.path));
  const planned = mounts.map((mount, i) => planMount(input, mount, names[i], shared));

  return {
    mountpointVersion: config.mountpoint.version,
    instanceType: instance.instanceType,
    host,
    cacheVolume,
    mounts: planned,
    omittedFlags: [...omitted].map(([flag, since]) => ({ flag, since })),
  };
}
