/**
 * Instance-type facts from the built-in table alone (instance-type-table.ts) and their shape: no AWS SDK, so the
 * constructs can tune for a type at synth time. instance-types.ts adds the DescribeInstanceTypes lookup.
 */
import { INSTANCE_TYPE_ROWS, INSTANCE_TYPE_SNAPSHOT, type InstanceTypeRow } from './instance-type-table';

interface NetworkCardFacts {
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
  /** Local NVMe instance-store disks, absent when the type has none (or only non-NVMe disks). */
  readonly instanceStore?: { readonly disks: number; readonly diskSizeGB: number };
  /** Where these facts came from, quoted in `tune` output. */
  readonly source: string;
}

const FALLBACK_SOURCE = `built-in table (ec2:DescribeInstanceTypes snapshot of ${INSTANCE_TYPE_SNAPSHOT.date})`;

function factsFromRow(row: InstanceTypeRow): InstanceTypeFacts {
  const [instanceType, architecture, , memoryMiB, cards, baseline, peak, store, perf, flags] = row;
  const perCard = typeof cards === 'number' ? Array.from({ length: cards }, () => [baseline, peak]) : cards;
  return {
    instanceType,
    architecture,
    memoryMiB,
    burstable: flags.includes('b'),
    networkCards: perCard.map(([baselineGbps, peakGbps], index) => ({ index, baselineGbps, peakGbps })),
    networkPerformance: perf,
    ...(store?.[2] ? { instanceStore: { disks: store[0], diskSizeGB: store[1] } } : {}),
    source: FALLBACK_SOURCE,
  };
}

export const FALLBACK_INSTANCE_TYPES: ReadonlyMap<string, InstanceTypeFacts> = new Map(
  INSTANCE_TYPE_ROWS.map((row) => [row[0], factsFromRow(row)]),
);

/** vCPUs a size name implies (xlarge = 4, 12xlarge = 48, large = 2, ...); undefined for metal and the like. */
function vCpusOfSize(size: string): number | undefined {
  const xlarge = /^(\d*)xlarge$/.exec(size);
  if (xlarge) return 4 * Number(xlarge[1] || 1);
  return { large: 2, medium: 1, small: 0.5, micro: 0.25, nano: 0.125 }[size];
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}

/**
 * The known types nearest to `instanceType`: in a known family the next smaller and next larger size
 * (c7gn.9xlarge → c7gn.8xlarge, c7gn.12xlarge), otherwise the three nearest names by edit distance.
 */
export function closestInstanceTypes(instanceType: string): string[] {
  const wanted = instanceType.trim().toLowerCase();
  const [family, size = ''] = wanted.split('.');
  if (FALLBACK_INSTANCE_TYPES.has(wanted)) return [wanted]; // only the spelling differs, e.g. M5.LARGE
  const inFamily = INSTANCE_TYPE_ROWS.filter((r) => r[0].startsWith(`${family}.`));
  const vCpus = vCpusOfSize(size);
  if (inFamily.length && vCpus !== undefined) {
    // Sizes before metal among types of equal vCPUs: the table is sorted by family, vCPUs, memory, name.
    const below = inFamily.filter((r) => r[2] < vCpus).at(-1);
    const above = inFamily.find((r) => r[2] > vCpus && !r[0].includes('metal'));
    return [below, above].filter((r) => r !== undefined).map((r) => r[0]);
  }
  const pool = inFamily.length ? inFamily : INSTANCE_TYPE_ROWS;
  return pool
    .map((r) => ({ name: r[0], distance: editDistance(wanted, r[0]) }))
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, 3)
    .map((c) => c.name);
}
