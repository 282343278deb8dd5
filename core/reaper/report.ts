import { type ReaperMetricName } from '../contract';
import type { BatchLookups } from './batch-jobs';

/** What a reaper run did (or, in a dry run, would do). Every scanned file system is in exactly one list. */
export interface ReapReport {
  readonly fleet: string;
  readonly dryRun: boolean;
  /** This fleet's file systems considered by the run (the event fast path considers one owner's only). */
  scanned: number;
  /** Deleted (or found already gone) by this run; in a dry run, those that would be deleted. */
  readonly deleted: string[];
  /** Tagged `mountfleet:marked-idle-at` (first idle sighting of metric-only evidence). */
  readonly marked: string[];
  /** Mark removed because the file system is in use again. */
  readonly unmarked: string[];
  readonly kept: { id: string; reason: string }[];
  /** Carry the fleet tag but were not made by the fleet (CreationToken, One Zone, backups): never touched. */
  readonly foreign: { id: string; reason: string }[];
  readonly failed: { id: string; error: string }[];
  /** Batch calls made for the evidence on Batch runs (DescribeJobs, 100 jobs a call; ListJobs for untagged runs). */
  readonly batchLookups: BatchLookups;
}

export function emptyReport(fleet: string, dryRun: boolean): ReapReport {
  return {
    fleet,
    dryRun,
    scanned: 0,
    deleted: [],
    marked: [],
    unmarked: [],
    kept: [],
    foreign: [],
    failed: [],
    batchLookups: { describeJobs: 0, listJobs: 0 },
  };
}

/** The counts published as CloudWatch metrics (and printed as a one-line summary). */
export function reportCounts(report: ReapReport): Record<ReaperMetricName, number> {
  return {
    Scanned: report.scanned,
    Deleted: report.deleted.length,
    Marked: report.marked.length,
    Unmarked: report.unmarked.length,
    Kept: report.kept.length,
    Foreign: report.foreign.length,
    Failed: report.failed.length,
  };
}

export function summarizeReport(report: ReapReport): string {
  const c = reportCounts(report);
  const verb = report.dryRun ? 'would delete' : 'deleted';
  const { describeJobs, listJobs } = report.batchLookups;
  const batch =
    describeJobs + listJobs > 0 ? `; Batch look-ups: ${describeJobs} DescribeJobs, ${listJobs} ListJobs` : '';
  return (
    `fleet ${report.fleet}${report.dryRun ? ' (dry run)' : ''}: scanned ${c.Scanned}, ${verb} ${c.Deleted}, ` +
    `marked ${c.Marked}, unmarked ${c.Unmarked}, kept ${c.Kept}, foreign ${c.Foreign}, failed ${c.Failed}${batch}`
  );
}
