/**
 * The plan of a scratch workload: its steps' bytes and times, the storage it holds, what it does to a fresh
 * bursting EFS file system's credit (core/credit, the rules EFS meters by), the bit rates at which the credit
 * runs out, and what each storage option costs. A step that reads R and writes W GiB spends R/3 + W GiB of
 * credit, less what the baseline earns over the run. Metadata operations are not modelled (small for large
 * sequential files).
 *
 * Pure: no clock, no I/O.
 */
import { costOptions, recommend, type CostOption } from './costs';
import type { RegionPrices } from './prices';
import { gibFromRate, MIB, UsageError } from '../common';
import {
  burstCreditOutlook,
  INITIAL_BURST_CREDIT_GIB,
  READ_METERING_FACTOR,
  type BurstCreditOutlook,
} from '../credit';
import { planS3Files, s3FilesCost, type S3FilesPlan } from './s3-files';
import { quantityGib, resolveInput, type Quantity, type ResolvedInput, type Workload } from './workload';

interface StepResult {
  readonly name: string;
  readonly readGib: number;
  readonly writeGib: number;
  /** Credit the step spends: read/3 + write. */
  readonly meteredGib: number;
  readonly seconds: number;
  /** True when the step's time was given; false when estimated from its share of bytes moved. */
  readonly timeGiven: boolean;
}

interface Exhaustion {
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
  readonly bursting: BurstCreditOutlook;
  readonly exhaustion: readonly Exhaustion[];
  readonly costs: readonly CostOption[];
  /** S3 Files: what it meters for the run and its limits; a cost row in `costs` when its prices are known. */
  readonly s3Files: S3FilesPlan;
  readonly recommendation: { readonly option: CostOption['option']; readonly reason: string };
  readonly prices: RegionPrices;
  readonly notes: readonly string[];
}

/** Time of each step: given, or the unassigned run time shared out by bytes moved (read + write). */
function stepSeconds(moved: number[], given: (number | undefined)[], runSeconds: number): number[] {
  const assigned = given.reduce<number>((sum, s) => sum + (s ?? 0), 0);
  if (assigned > runSeconds + 1e-6) {
    throw new UsageError(
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

/** The plan of one workload: its steps, storage, burst credit, exhaustion by bit rate and what each option costs. */
export function computePlan(
  workload: Workload,
  prices: RegionPrices,
  options: { atBitratesMbps?: readonly number[]; readBytes?: number } = {},
): PlanResult {
  const input = resolveInput(workload.input);
  const runSeconds = workload.runSeconds;
  if (!(runSeconds > 0)) throw new UsageError('give the run time (--run-time), e.g. 55m');
  if (workload.steps.length === 0) throw new UsageError('give at least one step (--step or --preset)');

  const { steps, storage } = planSteps(workload, input);
  const totals = {
    readGib: steps.reduce((a, s) => a + s.readGib, 0),
    writeGib: steps.reduce((a, s) => a + s.writeGib, 0),
    meteredGib: steps.reduce((a, s) => a + s.meteredGib, 0),
  };
  const bursting = burstCreditOutlook(totals.meteredGib, storage, runSeconds);
  const bitrates = options.atBitratesMbps ?? (input.bitrateMbps !== undefined ? [input.bitrateMbps] : []);
  const s3Files = planS3Files({ steps, totals, prices, readBytes: options.readBytes ?? MIB });
  const s3FilesRow = s3FilesCost(s3Files, storage, prices);
  const costs = [
    ...costOptions({ totals, storage, bursting, runSeconds, prices }),
    ...(s3FilesRow ? [s3FilesRow] : []),
  ];

  return {
    input,
    runSeconds,
    steps,
    totals,
    storage,
    bursting,
    exhaustion: exhaustionAt(bitrates, workload, input),
    costs,
    s3Files,
    recommendation: recommend(costs, bursting),
    prices,
    notes: planNotes(prices, steps, s3FilesRow !== undefined),
  };
}

/**
 * Each step's bytes, metered credit and time, and the storage curve: each step's writes grow the stored size
 * linearly over the step and stay until the end of the run.
 */
function planSteps(workload: Workload, input: ResolvedInput) {
  const reads = workload.steps.map((s) => quantityGib(s.read, input, s.name));
  const writes = workload.steps.map((s) => quantityGib(s.write, input, s.name));
  const seconds = stepSeconds(
    reads.map((r, i) => r + writes[i]),
    workload.steps.map((s) => s.seconds),
    workload.runSeconds,
  );
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
  const storage = {
    peakGib: stored,
    averageGib: gibSeconds / workload.runSeconds,
    gibHours: gibSeconds / 3600,
  };
  return { steps, storage };
}

/**
 * How much content one fresh file system's credit covers at each bit rate: the same pipeline over the same
 * duration of content, where multiples of the input scale with the bit rate and absolute sizes do not.
 */
function exhaustionAt(bitrates: readonly number[], workload: Workload, input: ResolvedInput): Exhaustion[] {
  if (bitrates.length > 0 && input.durationSeconds === undefined) {
    throw new UsageError('exhaustion by bit rate needs the input duration: give --duration or --bitrate');
  }
  return bitrates.map((mbps) => {
    const duration = input.durationSeconds as number;
    const scaled: ResolvedInput = {
      gib: gibFromRate(mbps, duration),
      durationSeconds: duration,
      bitrateMbps: mbps,
    };
    const perJob = workload.steps.reduce((a, s) => a + meteredGibFor(s.read, s.write, scaled, s.name), 0);
    const perContentHour = perJob / (duration / 3600);
    const contentHours = INITIAL_BURST_CREDIT_GIB / perContentHour;
    return {
      inputMbps: mbps,
      meteredGibPerContentHour: perContentHour,
      contentHours,
      wallHours: contentHours * (workload.runSeconds / duration),
    };
  });
}

/** What the numbers rest on, and what was estimated. */
function planNotes(prices: RegionPrices, steps: readonly StepResult[], s3FilesPriced: boolean): string[] {
  const notes = [
    'reads are metered at 1/3 of their bytes, writes in full (AWS Storage Blog, "Amazon EFS introduces 3X read-throughput increase")',
    'exhaustion ignores the baseline credit earned meanwhile (50 KiB/s per GiB stored, at least 1 MiB/s), so it errs early',
    `prices for ${prices.region} as of ${prices.asOf}`,
  ];
  if (steps.some((s) => !s.timeGiven)) {
    notes.push("step times not given are estimated from each step's share of bytes moved");
  }
  if (s3FilesPriced) {
    notes.push(
      "S3 Files: not included are S3 request charges (GETs and PUTs per GiB are not documented) and the bucket's " +
        'S3 storage, with the versions S3 Versioning keeps after the run deletes its files',
    );
  }
  return notes;
}
