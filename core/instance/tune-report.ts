/** What `mountfleet tune` shows: the plan the agent would make for an instance type, with reasons. */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { UsageError } from '../common';
import { parseAgentConfig, type AgentConfig } from '../contract';
import {
  DEFAULT_ROOT_FREE_GIB,
  describeDisks,
  listedInstanceStoreDisks,
  planCacheVolumeForType,
  quoteArg,
  planMounts,
  type TuningPlan,
} from '../tuner';
import { lookupInstanceType, UnknownInstanceTypeError } from './instance-type-lookup';

/** Used when no agent config is given: one immutable, locally and Express-cached dataset. */
export const EXAMPLE_CONFIG = {
  version: 1,
  fleetId: 'example',
  region: 'us-east-1',
  mounts: [
    {
      bucket: 'example-datasets',
      prefix: 'imagenet/',
      path: '/mnt/data',
      dataset: 'immutable',
      cache: 'local+express',
    },
  ],
  expressCache: { buckets: { 'use1-az4': 'example-cache--use1-az4--x-s3' } },
};

export interface TuneRequest {
  readonly instanceType: string;
  readonly config?: AgentConfig;
  readonly azId?: string;
  readonly interfaces?: readonly string[];
  /** Root volume free space assumed when the type has no instance store. */
  readonly rootFreeGiB?: number;
  /** undefined: answer from the built-in table only. */
  readonly ec2?: EC2Client;
}

export interface TuneReport {
  readonly plan: TuningPlan;
  readonly factsSource: string;
  readonly assumptions: readonly string[];
}

/**
 * The facts of an instance type a user named (`tune --instance-type`): one that neither the API nor the
 * built-in table knows is a usage error (exit 2), the message naming the closest known types. (On an
 * instance, `up` reads its own type from IMDS: there an unknown one is a failure.)
 */
export async function lookupNamedInstanceType(
  ...args: Parameters<typeof lookupInstanceType>
): ReturnType<typeof lookupInstanceType> {
  try {
    return await lookupInstanceType(...args);
  } catch (err) {
    if (err instanceof UnknownInstanceTypeError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
}

export async function tuneForInstanceType(request: TuneRequest): Promise<TuneReport> {
  const assumptions: string[] = [];
  const instance = await lookupNamedInstanceType(request.instanceType, request.ec2, (reason) =>
    assumptions.push(`DescribeInstanceTypes unavailable (${reason}): built-in table used`),
  );
  const config = request.config ?? parseAgentConfig(EXAMPLE_CONFIG, '(example)');
  if (!request.config)
    assumptions.push('no agent config given: example config with one immutable dataset at /mnt/data');
  const azId = request.azId ?? Object.keys(config.expressCache?.buckets ?? {})[0];
  const disks = listedInstanceStoreDisks(instance);
  const rootFreeGiB = request.rootFreeGiB ?? DEFAULT_ROOT_FREE_GIB;
  if (disks.length === 0)
    assumptions.push(`root volume free space assumed ${rootFreeGiB} GiB (--root-free-gib)`);
  else assumptions.push(`instance store as listed for the type: ${describeDisks(disks)}`);
  assumptions.push(
    `memory from the instance type (${instance.memoryMiB} MiB); on the instance: /proc/meminfo or the cgroup limit`,
  );
  const plan = planMounts({
    config,
    instance,
    memory: { totalMiB: instance.memoryMiB, source: `${instance.source} MemoryInfo` },
    cacheVolume: planCacheVolumeForType(instance, rootFreeGiB),
    ...(azId ? { azId } : {}),
    ...(request.interfaces ? { interfaces: request.interfaces } : {}),
  });
  return { plan, factsSource: instance.source, assumptions };
}

export function formatTuneReport(report: TuneReport, mountS3 = 'mount-s3'): string {
  const { plan } = report;
  const out: string[] = [
    `${plan.instanceType}: Mountpoint ${plan.mountpointVersion} settings (facts: ${report.factsSource})`,
    '',
  ];
  const row = (d: { setting: string; value: string; reason: string; fact: string }) => [
    `  ${d.setting} = ${d.value}`,
    `      why:  ${d.reason}`,
    `      fact: ${d.fact}`,
  ];
  out.push('host:', ...plan.host.flatMap(row));
  for (const m of plan.mounts) {
    out.push(
      '',
      `mount ${m.mount.path} (s3://${m.mount.bucket}/${m.mount.prefix}, ${m.failover ? 'Express cache with cache-less standby' : 'single process'}):`,
    );
    out.push(...m.decisions.flatMap(row));
    for (const p of m.processes) {
      const env = Object.entries(p.environment)
        .map(([k, v]) => `${k}=${v} `)
        .join('');
      out.push(`  [${p.role}] ${env}${[mountS3, ...p.args].map(quoteArg).join(' ')}`);
    }
  }
  if (plan.omittedFlags.length) {
    out.push(
      '',
      `left out (newer than ${plan.mountpointVersion}): ${plan.omittedFlags.map((f) => `${f.flag} (${f.since})`).join(', ')}`,
    );
  }
  out.push('', 'assumptions:', ...report.assumptions.map((a) => `  - ${a}`));
  return `${out.join('\n')}\n`;
}
