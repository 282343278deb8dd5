/**
 * EFS burst credit, as documented by AWS (EFS user guide "Throughput modes"; re:Post "How do Amazon EFS burst
 * credits work?"; AWS Storage Blog "Amazon EFS introduces 3X read-throughput increase"):
 * - baseline 50 KiB/s per GiB stored, at least 1 MiB/s; burst 100 MiB/s (100 MiB/s per TiB above 1 TiB);
 * - a new file system starts with 2.1 TiB of burst credit;
 * - throughput is *metered*: reads count at one third of their bytes, writes (and metadata) in full;
 * - credit is spent at (metered rate - baseline) and earned at baseline when below it.
 * The plan (core/plan), the preflight of `--expected-io` and the guard of a running job all count by these.
 *
 * Pure: no clock, no I/O.
 */
import { GIB } from '../common';

/** The credit of a new bursting file system (2.1 TiB), in GiB. */
export const INITIAL_BURST_CREDIT_GIB = 2.1 * 1024;
/** The same, in bytes. */
export const INITIAL_CREDIT_BYTES = INITIAL_BURST_CREDIT_GIB * GIB;
/** Reads are metered at one third of their bytes (writes and metadata in full). */
export const READ_METERING_FACTOR = 1 / 3;
/** Burst throughput: this much up to 1 TiB stored, and this much per TiB above. */
export const BURST_MIB_PER_S_PER_TIB = 100;
const BASELINE_KIB_PER_S_PER_GIB = 50;
const MIN_BASELINE_MIB_PER_S = 1;

/** What a run does to a fresh bursting file system's credit. */
export interface BurstCreditOutlook {
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
}

/** What the run does to a fresh bursting file system's credit: spent, earned at baseline, and whether it lasts. */
export function burstCreditOutlook(
  meteredGib: number,
  storage: { readonly peakGib: number; readonly averageGib: number },
  runSeconds: number,
): BurstCreditOutlook {
  const baselineMibPerS = Math.max(
    MIN_BASELINE_MIB_PER_S,
    (storage.averageGib * BASELINE_KIB_PER_S_PER_GIB) / 1024,
  );
  const burstMibPerS = Math.max(BURST_MIB_PER_S_PER_TIB, (storage.peakGib / 1024) * BURST_MIB_PER_S_PER_TIB);
  const averageMeteredMibPerS = (meteredGib * 1024) / runSeconds;
  const baselineEarnedGib = Math.min(meteredGib, (baselineMibPerS * runSeconds) / 1024);
  const netCreditUsedGib = meteredGib - baselineEarnedGib;
  const creditSurvives = netCreditUsedGib < INITIAL_BURST_CREDIT_GIB;
  return {
    initialCreditGib: INITIAL_BURST_CREDIT_GIB,
    baselineMibPerS,
    burstMibPerS,
    averageMeteredMibPerS,
    baselineEarnedGib,
    netCreditUsedGib,
    creditLeftGib: Math.max(0, INITIAL_BURST_CREDIT_GIB - netCreditUsedGib),
    creditSurvives,
    runsOutAfterSeconds: creditSurvives
      ? null
      : (INITIAL_BURST_CREDIT_GIB * 1024) / (averageMeteredMibPerS - baselineMibPerS),
  };
}
