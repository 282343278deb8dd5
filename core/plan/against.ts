/**
 * `mountfleet plan --against SUMMARY.json`: the plan of the workload beside what a run of it measured (the
 * summary `scratch run --summary` wrote, core/credit/run-summary.ts), so the planner is checked against what
 * real jobs used. The summary's run time is the plan's when no other is given.
 */
import { GIB } from '../common';
import { readRunSummary, type RunSummary } from '../credit';
import type { PlanResult } from './model';
import { planWorkload, type PlanRequest } from './plan-request';

export interface AgainstRow {
  readonly what: 'metered I/O (CloudWatch)' | 'metered I/O (NFS client)' | 'burst credit used';
  readonly plannedGib: number;
  /** What the run measured; null when it measured nothing (no CloudWatch datapoints). */
  readonly measuredGib: number | null;
  /** (planned − measured) / measured, in percent. */
  readonly differencePercent: number | null;
}

/** The plan's predictions beside what the run measured. */
function compareWithRun(plan: PlanResult, run: RunSummary): readonly AgainstRow[] {
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

/** The plan's rows beside the run's, and the summary they come from. */
interface AgainstRun {
  /** The summary file, as given. */
  readonly file: string;
  readonly rows: readonly AgainstRow[];
}

/**
 * The plan of the request's workload and, with `againstFile`, its comparison with that run's summary. A file
 * that is no run summary is a UsageError (exit 2) naming the field.
 */
export function planAndCompare(
  request: PlanRequest,
  againstFile: string | undefined,
): { readonly plan: PlanResult; readonly against?: AgainstRun } {
  if (againstFile === undefined) return { plan: planWorkload(request) };
  const run = readRunSummary(againstFile);
  const plan = planWorkload({ ...request, measuredRunSeconds: run.seconds ?? undefined });
  return { plan, against: { file: againstFile, rows: compareWithRun(plan, run) } };
}

export function renderAgainst({ rows, file }: AgainstRun): string {
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
