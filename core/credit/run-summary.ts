/**
 * The outcome of a `scratch run` as one JSON document (`--summary FILE` and the last line of stderr): the job,
 * its exit status and what its burst-credit guard measured (guard.ts). `mountfleet plan --against SUMMARY.json`
 * reads it back (core/plan/against.ts), so the planner is checked against what real jobs used.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../common';
import type { CreditReport } from './guard';

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

/** Reads and checks a summary file; a UsageError (exit 2) names the file and the field. */
export function readRunSummary(file: string): RunSummary {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(
      `--against ${file}: ${(err as Error).message} — give the file \`scratch run --summary\` wrote`,
    );
  }
  const parsed = runSummarySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `--against ${file}: ${issue.path.join('.') || '(root)'}: ${issue.message} — give the file \`scratch run --summary\` wrote`,
    );
  }
  return parsed.data;
}
