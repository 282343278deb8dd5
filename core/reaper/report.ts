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
  /** Entries left out of `kept` and `foreign` by reportWithin (each decision is in the log all the same). */
  omitted?: { kept: number; foreign: number };
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

/**
 * The report as JSON of at most `maxBytes`: whole when it fits, else with entries cut from the end of `kept`, then
 * of `foreign` (the lists of file systems nothing was done to, and the longest: 88,000 of 100,000 in a scan of
 * bench/reaper-scale.ts, 10 MB), counted in `omitted`. Lambda refuses a response over 6 MB, and the invocation
 * then fails and is retried, though its work is done; every decision is in the run's log lines anyway.
 */
export function reportWithin(report: ReapReport, maxBytes: number): ReapReport {
  // Measured entry by entry: the report's JSON whole would be one more string of 10 MB at the run's peak.
  const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
  // Each entry with the comma after it; a list of n > 0 entries has n - 1 commas.
  const keptBytes = report.kept.map((entry) => size(entry) + 1);
  const foreignBytes = report.foreign.map((entry) => size(entry) + 1);
  const listBytes = (bytes: readonly number[]) =>
    bytes.length === 0 ? 0 : bytes.reduce((a, b) => a + b) - 1;
  const omitted = { kept: report.kept.length, foreign: report.foreign.length };
  let excess =
    size({ ...report, kept: [], foreign: [] }) + listBytes(keptBytes) + listBytes(foreignBytes) - maxBytes;
  if (excess <= 0) return report;
  excess += size({ omitted }); // one byte more than `,"omitted":{…}` adds, at the largest counts
  const cut = <T>(list: readonly T[], bytes: readonly number[]): T[] => {
    let keep = list.length;
    while (excess > 0 && keep > 0) {
      keep--;
      excess -= keep === 0 ? bytes[0] - 1 : bytes[keep]; // the last one left takes no comma with it
    }
    return list.slice(0, keep);
  };
  const kept = cut(report.kept, keptBytes);
  const foreign = cut(report.foreign, foreignBytes);
  return {
    ...report,
    kept,
    foreign,
    omitted: { kept: omitted.kept - kept.length, foreign: omitted.foreign - foreign.length },
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
