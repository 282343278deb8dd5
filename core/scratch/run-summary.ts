/**
 * The outcome of a `scratch run` as one JSON document (`--summary FILE` and the last line of stderr), and
 * the comparison `mountfleet plan --against SUMMARY.json` makes with a plan, so the planner is checked
 * against what real jobs used.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { type PlanResult } from '../plan';
import { GIB, UsageError } from '../common';
import type { CreditReport } from './credit-guard';

const bytes = z.number().nonnegative().nullable();

export const runSummarySchema = z
  .object({
    fileSystemId: z.string().nullable(),
    jobId: z.string(),
    exitStatus: z.number().int(),
    /** Seconds the job ran (the guard's watch). */
    seconds: z.number().nonnegative().nullable(),
    /** Sum of the file system's MeteredIOBytes over the run (CloudWatch). */
    meteredIoBytes: bytes,
    /** BurstCreditBalance at the start minus the last one seen (CloudWatch). */
    burstCreditUsedBytes: z.number().nullable(),
    minBurstCreditBalanceBytes: bytes,
    maxPercentIoLimit: z.number().nullable(),
    /** Metered bytes the NFS client counted on this mount (reads at a third). */
    nfsMeteredBytes: bytes,
    expectedIoBytes: z.number().nonnegative().optional(),
    throughputModeSwitchedAt: z.string().optional(),
    /** `--on-credit-low elastic` was due and the switch never happened: the attempts and why. */
    throughputModeSwitchFailed: z.string().optional(),
    /** GetMetricData calls the guard made. */
    creditChecks: z.number().int().nonnegative(),
  })
  .strip();
export type RunSummary = z.infer<typeof runSummarySchema>;

export function runSummary(run: {
  readonly jobId: string;
  readonly fileSystemId?: string;
  readonly exitStatus: number;
  readonly credit?: CreditReport;
  readonly expectedIoBytes?: number;
}): RunSummary {
  const c = run.credit;
  return {
    fileSystemId: run.fileSystemId ?? null,
    jobId: run.jobId,
    exitStatus: run.exitStatus,
    seconds: c?.seconds ?? null,
    meteredIoBytes: c?.meteredIoBytes ?? null,
    burstCreditUsedBytes: c?.burstCreditUsedBytes ?? null,
    minBurstCreditBalanceBytes: c?.minBurstCreditBalanceBytes ?? null,
    maxPercentIoLimit: c?.maxPercentIoLimit ?? null,
    nfsMeteredBytes: c?.nfsMeteredBytes ?? null,
    ...(run.expectedIoBytes !== undefined ? { expectedIoBytes: run.expectedIoBytes } : {}),
    ...(c?.throughputModeSwitchedAt ? { throughputModeSwitchedAt: c.throughputModeSwitchedAt } : {}),
    ...(c?.throughputModeSwitchFailed ? { throughputModeSwitchFailed: c.throughputModeSwitchFailed } : {}),
    creditChecks: c?.checks ?? 0,
  };
}

/** `plan --against` was given a file that is no run summary: the message names the file and the field (exit 2). */
class SummaryError extends UsageError {
  override readonly name = 'SummaryError';
}

/** Reads and checks a summary file; the error names the file and the field. */
export function readRunSummary(file: string): RunSummary {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new SummaryError(
      `--against ${file}: ${(err as Error).message} — give the file \`scratch run --summary\` wrote`,
    );
  }
  const parsed = runSummarySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SummaryError(
      `--against ${file}: ${issue.path.join('.') || '(root)'}: ${issue.message} — give the file \`scratch run --summary\` wrote`,
    );
  }
  return parsed.data;
}

export interface AgainstRow {
  readonly what: 'metered I/O (CloudWatch)' | 'metered I/O (NFS client)' | 'burst credit used';
  readonly plannedGib: number;
  /** What the run measured; null when it measured nothing (no CloudWatch datapoints). */
  readonly measuredGib: number | null;
  /** (planned − measured) / measured, in percent. */
  readonly differencePercent: number | null;
}

/** The plan's predictions beside what the run measured. */
export function compareWithRun(plan: PlanResult, run: RunSummary): readonly AgainstRow[] {
  const row = (what: AgainstRow['what'], plannedGib: number, measuredBytes: number | null): AgainstRow => {
    const measuredGib = measuredBytes === null ? null : measuredBytes / GIB;
    return {
      what,
      plannedGib,
      measuredGib,
      differencePercent:
        measuredGib === null || measuredGib === 0 ? null : ((plannedGib - measuredGib) / measuredGib) * 100,
    };
  };
  return [
    row('metered I/O (CloudWatch)', plan.totals.meteredGib, run.meteredIoBytes),
    ...(run.nfsMeteredBytes === null
      ? []
      : [row('metered I/O (NFS client)', plan.totals.meteredGib, run.nfsMeteredBytes)]),
    row('burst credit used', plan.bursting.netCreditUsedGib, run.burstCreditUsedBytes),
  ];
}

export function renderAgainst(rows: readonly AgainstRow[], file: string): string {
  const gib = (v: number | null) => (v === null ? 'not measured' : `${v.toFixed(2)} GiB`);
  const pct = (v: number | null) => (v === null ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(1)} %`);
  return [
    `Against ${file} (plan − run, in % of the run):`,
    ...rows.map(
      (r) =>
        `  ${r.what.padEnd(24)} plan ${gib(r.plannedGib).padStart(12)}   run ${gib(r.measuredGib).padStart(12)}   ${pct(r.differencePercent)}`,
    ),
    '',
  ].join('\n');
}
