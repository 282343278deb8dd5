/**
 * Network, memory and instance-store facts of an EC2 instance type: from `ec2:DescribeInstanceTypes`
 * when the API answers, else from a small built-in table of common fleet types.
 */
import { DescribeInstanceTypesCommand, type EC2Client, type InstanceTypeInfo } from '@aws-sdk/client-ec2';

export interface NetworkCardFacts {
  readonly index: number;
  readonly baselineGbps: number;
  readonly peakGbps: number;
}

export interface InstanceTypeFacts {
  readonly instanceType: string;
  readonly architecture: 'x86_64' | 'arm64';
  readonly memoryMiB: number;
  /** CPU credits (t2/t3/t4g): sustained throughput is the baseline, not the peak. */
  readonly burstable: boolean;
  /** At least one card; index 0 first. */
  readonly networkCards: readonly NetworkCardFacts[];
  /** The API's headline figure, e.g. "Up to 12.5 Gigabit" or "4x 100 Gigabit". */
  readonly networkPerformance: string;
  /** Local NVMe instance-store disks, absent when the type has none. */
  readonly instanceStore?: { readonly disks: number; readonly diskSizeGB: number };
  /** Where these facts came from, quoted in `tune` output. */
  readonly source: string;
}

export const FALLBACK_SOURCE =
  'built-in table (ec2:DescribeInstanceTypes snapshot shipped with moto 5.2.5, us-east-1)';

type Row = [
  string,
  'x86_64' | 'arm64',
  number,
  boolean,
  number,
  number,
  number,
  [number, number] | null,
  string,
];
// instance type, architecture, memory MiB, burstable, network cards, baseline Gbps per card, peak Gbps
// per card, instance store [disks, GB each], NetworkPerformance.
const FALLBACK_ROWS: Row[] = [
  ['t3.medium', 'x86_64', 4096, true, 1, 0.256, 5, null, 'Up to 5 Gigabit'],
  ['t3.large', 'x86_64', 8192, true, 1, 0.512, 5, null, 'Up to 5 Gigabit'],
  ['t3.xlarge', 'x86_64', 16384, true, 1, 1.024, 5, null, 'Up to 5 Gigabit'],
  ['m5.xlarge', 'x86_64', 16384, false, 1, 1.25, 10, null, 'Up to 10 Gigabit'],
  ['m6i.xlarge', 'x86_64', 16384, false, 1, 1.562, 12.5, null, 'Up to 12.5 Gigabit'],
  ['m7g.2xlarge', 'arm64', 32768, false, 1, 3.75, 15, null, 'Up to 15 Gigabit'],
  ['m7i.4xlarge', 'x86_64', 65536, false, 1, 6.25, 12.5, null, 'Up to 12.5 Gigabit'],
  ['c6i.4xlarge', 'x86_64', 32768, false, 1, 6.25, 12.5, null, 'Up to 12.5 Gigabit'],
  ['c7gn.16xlarge', 'arm64', 131072, false, 1, 200, 200, null, '200 Gigabit'],
  ['r6i.8xlarge', 'x86_64', 262144, false, 1, 12.5, 12.5, null, '12.5 Gigabit'],
  ['m5d.8xlarge', 'x86_64', 131072, false, 1, 10, 10, [2, 600], '10 Gigabit'],
  ['m6id.4xlarge', 'x86_64', 65536, false, 1, 6.25, 12.5, [1, 950], 'Up to 12.5 Gigabit'],
  ['c6id.8xlarge', 'x86_64', 65536, false, 1, 12.5, 12.5, [1, 1900], '12.5 Gigabit'],
  ['i4i.8xlarge', 'x86_64', 262144, false, 1, 18.75, 18.75, [2, 3750], '18.75 Gigabit'],
  ['g5.xlarge', 'x86_64', 16384, false, 1, 2.5, 10, [1, 250], 'Up to 10 Gigabit'],
  ['g5.12xlarge', 'x86_64', 196608, false, 1, 40, 40, [1, 3800], '40 Gigabit'],
  ['g6.12xlarge', 'x86_64', 196608, false, 1, 40, 40, [4, 940], '40 Gigabit'],
  ['p4d.24xlarge', 'x86_64', 1179648, false, 4, 100, 100, [8, 1000], '4x 100 Gigabit'],
  ['p5.48xlarge', 'x86_64', 2097152, false, 32, 100, 100, [8, 3800], '3200 Gigabit'],
  ['trn1.32xlarge', 'x86_64', 524288, false, 8, 100, 100, [4, 1900], '8x 100 Gigabit'],
];

export const FALLBACK_INSTANCE_TYPES: ReadonlyMap<string, InstanceTypeFacts> = new Map(
  FALLBACK_ROWS.map(
    ([instanceType, architecture, memoryMiB, burstable, cards, baseline, peak, store, perf]) => [
      instanceType,
      {
        instanceType,
        architecture,
        memoryMiB,
        burstable,
        networkCards: Array.from({ length: cards }, (_, index) => ({
          index,
          baselineGbps: baseline,
          peakGbps: peak,
        })),
        networkPerformance: perf,
        ...(store ? { instanceStore: { disks: store[0], diskSizeGB: store[1] } } : {}),
        source: FALLBACK_SOURCE,
      },
    ],
  ),
);

/** Converts one DescribeInstanceTypes entry; undefined when it lacks the network facts we need. */
export function factsFromApi(info: InstanceTypeInfo): InstanceTypeFacts | undefined {
  const cards = (info.NetworkInfo?.NetworkCards ?? [])
    .filter((c) => c.BaselineBandwidthInGbps !== undefined && c.PeakBandwidthInGbps !== undefined)
    .map((c) => ({
      index: c.NetworkCardIndex ?? 0,
      baselineGbps: c.BaselineBandwidthInGbps!,
      peakGbps: c.PeakBandwidthInGbps!,
    }))
    .sort((a, b) => a.index - b.index);
  if (!info.InstanceType || cards.length === 0 || !info.MemoryInfo?.SizeInMiB) return undefined;
  const disk = info.InstanceStorageInfo?.Disks?.[0];
  const arch = info.ProcessorInfo?.SupportedArchitectures ?? [];
  return {
    instanceType: info.InstanceType,
    architecture: arch.includes('arm64') ? 'arm64' : 'x86_64',
    memoryMiB: info.MemoryInfo.SizeInMiB,
    burstable: info.BurstablePerformanceSupported === true,
    networkCards: cards,
    networkPerformance: info.NetworkInfo?.NetworkPerformance ?? '',
    ...(disk?.Count && disk.SizeInGB && info.InstanceStorageInfo?.NvmeSupport !== 'unsupported'
      ? { instanceStore: { disks: disk.Count, diskSizeGB: disk.SizeInGB } }
      : {}),
    source: 'ec2:DescribeInstanceTypes',
  };
}

/**
 * The facts of `instanceType`: the API first, the built-in table when the call fails (no credentials,
 * no network, a throttled boot storm). Throws only when neither knows the type.
 */
export async function lookupInstanceType(
  instanceType: string,
  ec2: EC2Client | undefined,
  onFallback: (reason: string) => void = () => {},
): Promise<InstanceTypeFacts> {
  let apiError = 'not asked (offline)';
  if (ec2) {
    try {
      const out = await ec2.send(
        new DescribeInstanceTypesCommand({ InstanceTypes: [instanceType as never] }),
      );
      const facts = out.InstanceTypes?.[0] && factsFromApi(out.InstanceTypes[0]);
      if (facts) return facts;
      apiError = 'the answer had no network card facts';
    } catch (e) {
      apiError = `${(e as Error).name}: ${(e as Error).message}`;
    }
  }
  const fallback = FALLBACK_INSTANCE_TYPES.get(instanceType);
  if (!fallback) {
    throw new Error(
      `unknown instance type ${instanceType}: DescribeInstanceTypes failed (${apiError}) and it is not in the built-in table`,
    );
  }
  onFallback(apiError);
  return fallback;
}
