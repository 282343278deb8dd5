/**
 * What a planned run costs on each storage option (EFS One Zone bursting or elastic, EBS gp3 at the used size
 * or twice it), and which one the plan recommends. Pure.
 */
import { HOURS_PER_MONTH, type RegionPrices } from './prices';

/** Throughput every gp3 volume includes; more is provisioned and paid per MB/s-month. */
const GP3_INCLUDED_MIB_PER_S = 125;

export interface CostOption {
  readonly option:
    'efs-one-zone-bursting' | 'efs-one-zone-elastic' | 'ebs-gp3-used' | 'ebs-gp3-2x' | 's3-files';
  readonly label: string;
  readonly usd: number;
  /** Whether it can carry the run as timed. */
  readonly feasible: boolean;
  /**
   * Whether the recommendation weighs it. gp3 at the used size is not: a volume is sized before the run and
   * needs headroom, so gp3 is compared at 2x; the used-size row is shown as the lower bound.
   */
  readonly compared: boolean;
  readonly detail: string;
}

function storageUsd(gibHours: number, pricePerGbMonth: number): number {
  return (gibHours / HOURS_PER_MONTH) * pricePerGbMonth;
}

function gp3(sizeGib: number, movedGib: number, runSeconds: number, prices: RegionPrices) {
  const requiredMibPerS = (movedGib * 1024) / runSeconds;
  const extraMibPerS = Math.max(0, Math.ceil(requiredMibPerS - GP3_INCLUDED_MIB_PER_S));
  const hours = runSeconds / 3600;
  const usd =
    storageUsd(sizeGib * hours, prices.ebsGp3StorageGbMonth) +
    (extraMibPerS * hours * prices.ebsGp3ThroughputMbpsMonth) / HOURS_PER_MONTH;
  const detail =
    `${sizeGib} GiB for ${(hours * 60).toFixed(0)} min` +
    (extraMibPerS > 0 ? `, +${extraMibPerS} MB/s provisioned above 125` : ', within the included 125 MB/s');
  return { usd, detail };
}

/** What the costs depend on: the bytes moved, the storage curve and the burst credit of the run. */
interface CostInput {
  readonly totals: { readonly readGib: number; readonly writeGib: number };
  readonly storage: { readonly peakGib: number; readonly gibHours: number };
  readonly bursting: {
    readonly averageMeteredMibPerS: number;
    readonly burstMibPerS: number;
    readonly creditSurvives: boolean;
    readonly creditLeftGib: number;
  };
  readonly runSeconds: number;
  readonly prices: RegionPrices;
}

/** Bursting carries the run when its credit lasts and the metered rate stays within the burst rate. */
function burstingFeasible(b: CostInput['bursting']): boolean {
  return b.creditSurvives && b.averageMeteredMibPerS <= b.burstMibPerS;
}

/** The run's cost on each option, and whether the option can carry the run as timed. */
export function costOptions({ totals, storage, bursting, runSeconds, prices }: CostInput): CostOption[] {
  const { readGib, writeGib } = totals;
  const usedGib = Math.max(1, Math.ceil(storage.peakGib));
  const gp3Used = gp3(usedGib, readGib + writeGib, runSeconds, prices);
  const gp3Double = gp3(2 * usedGib, readGib + writeGib, runSeconds, prices);
  const efsStorage = storageUsd(storage.gibHours, prices.efsOneZoneStorageGbMonth);
  const elasticIo = readGib * prices.efsElasticReadPerGb + writeGib * prices.efsElasticWritePerGb;
  return [
    {
      option: 'efs-one-zone-bursting',
      label: 'EFS One Zone, bursting',
      usd: efsStorage,
      feasible: burstingFeasible(bursting),
      compared: true,
      detail: !bursting.creditSurvives
        ? 'burst credit runs out during the run'
        : bursting.averageMeteredMibPerS > bursting.burstMibPerS
          ? `needs ${bursting.averageMeteredMibPerS.toFixed(0)} MiB/s metered, above the ${bursting.burstMibPerS.toFixed(0)} MiB/s burst`
          : `storage only (${storage.gibHours.toFixed(1)} GiB-h); throughput free while credit lasts`,
    },
    {
      option: 'efs-one-zone-elastic',
      label: 'EFS One Zone, elastic',
      usd: efsStorage + elasticIo,
      feasible: true,
      compared: true,
      detail: `storage + ${readGib.toFixed(1)} GiB read, ${writeGib.toFixed(1)} GiB written at elastic prices`,
    },
    {
      option: 'ebs-gp3-used',
      label: 'EBS gp3, used size',
      usd: gp3Used.usd,
      feasible: true,
      compared: false,
      detail: gp3Used.detail,
    },
    {
      option: 'ebs-gp3-2x',
      label: 'EBS gp3, 2x used size',
      usd: gp3Double.usd,
      feasible: true,
      compared: true,
      detail: gp3Double.detail,
    },
  ];
}

/**
 * The cheapest compared option that carries the run. A volume is sized before the run, so it needs headroom:
 * EFS is compared with gp3 at 2x the used size (measured on the 30-minute ProRes encode ladder: EFS cost about
 * what gp3 costs at 2x); the used-size row is the lower bound.
 */
export function recommend(
  costs: readonly CostOption[],
  bursting: CostInput['bursting'],
): { readonly option: CostOption['option']; readonly reason: string } {
  const candidates = costs.filter((c) => c.feasible && c.compared);
  const best = candidates.reduce((a, b) => (b.usd < a.usd ? b : a));
  const reason =
    best.option === 'efs-one-zone-bursting'
      ? `cheapest compared option that fits; the credit survives with ${bursting.creditLeftGib.toFixed(0)} GiB left`
      : !burstingFeasible(bursting)
        ? `bursting cannot carry this run (${costs[0].detail}); ${best.label} is the cheapest that can`
        : `${best.label} is cheaper than EFS bursting for this run`;
  return { option: best.option, reason };
}
