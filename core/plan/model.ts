/**
 * Burst-credit and cost model of a scratch workload on EFS One Zone (bursting, elastic) versus EBS gp3.
 *
 * EFS bursting, as documented by AWS (EFS user guide "Throughput modes"; re:Post "How do Amazon EFS
 * burst credits work?"; AWS Storage Blog "Amazon EFS introduces 3X read-throughput increase"):
 * - baseline 50 KiB/s per GiB stored, at least 1 MiB/s; burst 100 MiB/s (100 MiB/s per TiB above 1 TiB);
 * - a new file system starts with 2.1 TiB of burst credit;
 * - throughput is *metered*: reads count at one third of their bytes, writes (and metadata) in full;
 * - credit is spent at (metered rate - baseline) and earned at baseline when below it.
 * So a step that reads R and writes W GiB spends R/3 + W GiB of credit, less what the baseline earns
 * over the run. Metadata operations are not modelled (small for large sequential files).
 *
 * Pure: no clock, no I/O.
 */
import { HOURS_PER_MONTH, type RegionPrices } from './prices';
import { gibFromRate } from './units';
import {
  quantityGib,
  resolveInput,
  WorkloadError,
  type Quantity,
  type ResolvedInput,
  type Workload,
} from './workload';

export const INITIAL_BURST_CREDIT_GIB = 2.1 * 1024;
export const BASELINE_KIB_PER_S_PER_GIB = 50;
export const MIN_BASELINE_MIB_PER_S = 1;
export const BURST_MIB_PER_S_PER_TIB = 100;
/** Reads are metered at one third of their bytes (writes and metadata in full). */
export const READ_METERING_FACTOR = 1 / 3;
/** Throughput every gp3 volume includes; more is provisioned and paid per MB/s-month. */
export const GP3_INCLUDED_MIB_PER_S = 125;

export interface StepResult {
  readonly name: string;
  readonly readGib: number;
  readonly writeGib: number;
  /** Credit the step spends: read/3 + write. */
  readonly meteredGib: number;
  readonly seconds: number;
  /** True when the step's time was given; false when estimated from its share of bytes moved. */
  readonly timeGiven: boolean;
}

export interface CostOption {
  readonly option: 'efs-one-zone-bursting' | 'efs-one-zone-elastic' | 'ebs-gp3-used' | 'ebs-gp3-2x';
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

export interface Exhaustion {
  readonly inputMbps: number;
  /** Credit spent per hour of input content at this bit rate. */
  readonly meteredGibPerContentHour: number;
  /** Hours of input content one fresh file system's 2.1 TiB credit covers (baseline earnings ignored). */
  readonly contentHours: number;
  /** The same, in wall-clock hours if the pipeline keeps the run's pace (run time / content duration). */
  readonly wallHours: number;
}

export interface PlanResult {
  readonly input: ResolvedInput;
  readonly runSeconds: number;
  readonly steps: readonly StepResult[];
  readonly totals: { readonly readGib: number; readonly writeGib: number; readonly meteredGib: number };
  readonly storage: {
    /** Everything written is kept until the scratch file system is deleted at the end of the run. */
    readonly peakGib: number;
    readonly averageGib: number;
    readonly gibHours: number;
  };
  readonly bursting: {
    readonly initialCreditGib: number;
    readonly baselineMibPerS: number;
    readonly burstMibPerS: number;
    readonly averageMeteredMibPerS: number;
    readonly baselineEarnedGib: number;
    /** Metered minus what the baseline earned during the run: the fall in BurstCreditBalance. */
    readonly netCreditUsedGib: number;
    readonly creditLeftGib: number;
    readonly creditSurvives: boolean;
    /** Seconds into the run at which the credit runs out, when it does. */
    readonly runsOutAfterSeconds: number | null;
  };
  readonly exhaustion: readonly Exhaustion[];
  readonly costs: readonly CostOption[];
  readonly recommendation: { readonly option: CostOption['option']; readonly reason: string };
  readonly prices: RegionPrices;
  readonly notes: readonly string[];
}

/** Time of each step: given, or the unassigned run time shared out by bytes moved (read + write). */
function stepSeconds(moved: number[], given: (number | undefined)[], runSeconds: number): number[] {
  const assigned = given.reduce<number>((sum, s) => sum + (s ?? 0), 0);
  if (assigned > runSeconds + 1e-6) {
    throw new WorkloadError(
      `the steps' times add up to ${assigned} s, more than the run time (${runSeconds} s)`,
    );
  }
  const open = given.map((s, i) => (s === undefined ? moved[i] : 0));
  const openCount = given.filter((s) => s === undefined).length;
  const openMoved = open.reduce((a, b) => a + b, 0);
  return given.map((s, i) => {
    if (s !== undefined) return s;
    const share = openMoved > 0 ? open[i] / openMoved : 1 / openCount;
    return (runSeconds - assigned) * share;
  });
}

function meteredGibFor(read: Quantity, write: Quantity, input: ResolvedInput, name: string): number {
  return quantityGib(read, input, name) * READ_METERING_FACTOR + quantityGib(write, input, name);
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

export function computePlan(
  workload: Workload,
  prices: RegionPrices,
  options: { atBitratesMbps?: readonly number[] } = {},
): PlanResult {
  const input = resolveInput(workload.input);
  const runSeconds = workload.runSeconds;
  if (!(runSeconds > 0)) throw new WorkloadError('give the run time (--run-time), e.g. 55m');
  if (workload.steps.length === 0) throw new WorkloadError('give at least one step (--step or --preset)');

  const reads = workload.steps.map((s) => quantityGib(s.read, input, s.name));
  const writes = workload.steps.map((s) => quantityGib(s.write, input, s.name));
  const seconds = stepSeconds(
    reads.map((r, i) => r + writes[i]),
    workload.steps.map((s) => s.seconds),
    runSeconds,
  );

  // Storage curve: each step's writes grow the stored size linearly over the step and stay until the end.
  let stored = 0;
  let gibSeconds = 0;
  const steps: StepResult[] = workload.steps.map((s, i) => {
    gibSeconds += (stored + writes[i] / 2) * seconds[i];
    stored += writes[i];
    return {
      name: s.name,
      readGib: reads[i],
      writeGib: writes[i],
      meteredGib: reads[i] * READ_METERING_FACTOR + writes[i],
      seconds: seconds[i],
      timeGiven: s.seconds !== undefined,
    };
  });
  const peakGib = stored;
  const gibHours = gibSeconds / 3600;
  const averageGib = gibSeconds / runSeconds;
  const readGib = reads.reduce((a, b) => a + b, 0);
  const writeGib = writes.reduce((a, b) => a + b, 0);
  const meteredGib = steps.reduce((a, s) => a + s.meteredGib, 0);

  const baselineMibPerS = Math.max(MIN_BASELINE_MIB_PER_S, (averageGib * BASELINE_KIB_PER_S_PER_GIB) / 1024);
  const burstMibPerS = Math.max(BURST_MIB_PER_S_PER_TIB, (peakGib / 1024) * BURST_MIB_PER_S_PER_TIB);
  const averageMeteredMibPerS = (meteredGib * 1024) / runSeconds;
  const baselineEarnedGib = Math.min(meteredGib, (baselineMibPerS * runSeconds) / 1024);
  const netCreditUsedGib = meteredGib - baselineEarnedGib;
  const creditLeftGib = Math.max(0, INITIAL_BURST_CREDIT_GIB - netCreditUsedGib);
  const creditSurvives = netCreditUsedGib < INITIAL_BURST_CREDIT_GIB;
  const runsOutAfterSeconds = creditSurvives
    ? null
    : (INITIAL_BURST_CREDIT_GIB * 1024) / (averageMeteredMibPerS - baselineMibPerS);

  const exhaustion: Exhaustion[] = [];
  const bitrates = options.atBitratesMbps ?? (input.bitrateMbps !== undefined ? [input.bitrateMbps] : []);
  if (bitrates.length > 0 && input.durationSeconds === undefined) {
    throw new WorkloadError('exhaustion by bit rate needs the input duration: give --duration or --bitrate');
  }
  for (const mbps of bitrates) {
    const duration = input.durationSeconds as number;
    // The same pipeline over the same duration of content at another bit rate: multiples of the input
    // scale with it, bit-rate outputs and absolute sizes do not.
    const scaled: ResolvedInput = {
      gib: gibFromRate(mbps, duration),
      durationSeconds: duration,
      bitrateMbps: mbps,
    };
    const perJob = workload.steps.reduce((a, s) => a + meteredGibFor(s.read, s.write, scaled, s.name), 0);
    const perContentHour = perJob / (duration / 3600);
    const contentHours = INITIAL_BURST_CREDIT_GIB / perContentHour;
    exhaustion.push({
      inputMbps: mbps,
      meteredGibPerContentHour: perContentHour,
      contentHours,
      wallHours: contentHours * (runSeconds / duration),
    });
  }

  const burstingFeasible = creditSurvives && averageMeteredMibPerS <= burstMibPerS;
  const usedGib = Math.max(1, Math.ceil(peakGib));
  const gp3Used = gp3(usedGib, readGib + writeGib, runSeconds, prices);
  const gp3Double = gp3(2 * usedGib, readGib + writeGib, runSeconds, prices);
  const efsStorage = storageUsd(gibHours, prices.efsOneZoneStorageGbMonth);
  const elasticIo = readGib * prices.efsElasticReadPerGb + writeGib * prices.efsElasticWritePerGb;
  const costs: CostOption[] = [
    {
      option: 'efs-one-zone-bursting',
      label: 'EFS One Zone, bursting',
      usd: efsStorage,
      feasible: burstingFeasible,
      compared: true,
      detail: !creditSurvives
        ? 'burst credit runs out during the run'
        : averageMeteredMibPerS > burstMibPerS
          ? `needs ${averageMeteredMibPerS.toFixed(0)} MiB/s metered, above the ${burstMibPerS.toFixed(0)} MiB/s burst`
          : `storage only (${gibHours.toFixed(1)} GiB-h); throughput free while credit lasts`,
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

  // A volume is sized before the run, so it needs headroom: compare EFS with gp3 at 2x the used size
  // (measured on the 30-minute ProRes encode ladder: EFS cost about what gp3 costs at 2x). The used-size row
  // is the lower bound.
  const candidates = costs.filter((c) => c.feasible && c.compared);
  const best = candidates.reduce((a, b) => (b.usd < a.usd ? b : a));
  const reason =
    best.option === 'efs-one-zone-bursting'
      ? `cheapest compared option that fits; the credit survives with ${creditLeftGib.toFixed(0)} GiB left`
      : !burstingFeasible
        ? `bursting cannot carry this run (${costs[0].detail}); ${best.label} is the cheapest that can`
        : `${best.label} is cheaper than EFS bursting for this run`;

  const notes = [
    'reads are metered at 1/3 of their bytes, writes in full (AWS Storage Blog, "Amazon EFS introduces 3X read-throughput increase")',
    'exhaustion ignores the baseline credit earned meanwhile (50 KiB/s per GiB stored, at least 1 MiB/s), so it errs early',
    `prices for ${prices.region} as of ${prices.asOf}`,
  ];
  if (steps.some((s) => !s.timeGiven)) {
    notes.push("step times not given are estimated from each step's share of bytes moved");
  }

  return {
    input,
    runSeconds,
    steps,
    totals: { readGib, writeGib, meteredGib },
    storage: { peakGib, averageGib, gibHours },
    bursting: {
      initialCreditGib: INITIAL_BURST_CREDIT_GIB,
      baselineMibPerS,
      burstMibPerS,
      averageMeteredMibPerS,
      baselineEarnedGib,
      netCreditUsedGib,
      creditLeftGib,
      creditSurvives,
      runsOutAfterSeconds,
    },
    exhaustion,
    costs,
    recommendation: { option: best.option, reason },
    prices,
    notes,
  };
}
