/**
 * Network, memory and instance-store facts of an EC2 instance type: from `ec2:DescribeInstanceTypes`
 * when the API answers, else from the built-in table generated from a DescribeInstanceTypes snapshot
 * (instance-type-table.ts, scripts/generate-instance-types.ts).
 */
import { DescribeInstanceTypesCommand, type EC2Client, type InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { closestInstanceTypes, FALLBACK_INSTANCE_TYPES, type InstanceTypeFacts } from '../tuner';
import { MountfleetError } from '../common';

/** A type neither the API nor the table knows; `closest` holds the nearest known names. */
export class UnknownInstanceTypeError extends MountfleetError {
  override readonly name = 'UnknownInstanceTypeError';

  constructor(
    readonly instanceType: string,
    readonly closest: readonly string[],
    apiError?: string,
  ) {
    super(
      `unknown instance type "${instanceType}"` +
        (closest.length ? `; closest known: ${closest.join(', ')}` : '') +
        (apiError ? ` (DescribeInstanceTypes: ${apiError})` : ''),
    );
  }
}

/** Converts one DescribeInstanceTypes entry; undefined when it lacks the network facts we need. */
function factsFromApi(info: InstanceTypeInfo): InstanceTypeFacts | undefined {
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
 * no network, a throttled boot storm). Throws UnknownInstanceTypeError when neither knows the type.
 */
export async function lookupInstanceType(
  instanceType: string,
  ec2: EC2Client | undefined,
  onFallback: (reason: string) => void = () => {},
): Promise<InstanceTypeFacts> {
  let apiError: string | undefined;
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
  if (!fallback)
    throw new UnknownInstanceTypeError(instanceType, closestInstanceTypes(instanceType), apiError);
  onFallback(apiError ?? 'not asked (offline)');
  return fallback;
}
