/** The report a Lambda may return (core/reaper/report.ts reportWithin): whole when it fits, else cut to fit. */
import { emptyReport, reportWithin, type ReapReport } from '../../../core/reaper/report';

function reportOf(kept: number, foreign: number): ReapReport {
  const report = emptyReport('f1', false);
  report.scanned = kept + foreign + 2;
  report.deleted.push('fs-deleted');
  report.failed.push({ id: 'fs-failed', error: 'AccessDeniedException: no' });
  for (let i = 0; i < kept; i++)
    report.kept.push({ id: `fs-${i}`, reason: 'in use: 3 client connection(s)' });
  for (let i = 0; i < foreign; i++) report.foreign.push({ id: `fs-f${i}`, reason: 'foreign: not One Zone' });
  return report;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('reportWithin', () => {
  it('returns a report that fits as it is', () => {
    const report = reportOf(10, 1);
    expect(reportWithin(report, bytes(report))).toBe(report);
    expect(reportWithin(reportOf(0, 0), bytes(reportOf(0, 0)))).toEqual(reportOf(0, 0));
  });

  it('never returns more than the limit, one byte under the whole report and below', () => {
    for (const report of [reportOf(10, 1), reportOf(0, 3), reportOf(1, 0)]) {
      const whole = bytes(report);
      for (let limit = whole - 1; limit > whole - 300; limit--) {
        const cut = reportWithin(report, limit);
        if (cut.kept.length + cut.foreign.length > 0) expect(bytes(cut)).toBeLessThanOrEqual(limit);
        expect(cut.omitted).toEqual({
          kept: report.kept.length - cut.kept.length,
          foreign: report.foreign.length - cut.foreign.length,
        });
      }
    }
  });

  it('cuts kept entries from the end, then foreign ones, counts them, and keeps every other list whole', () => {
    const report = reportOf(1000, 100);
    const limit = 20_000;

    const cut = reportWithin(report, limit);

    expect(bytes(cut)).toBeLessThanOrEqual(limit);
    expect(cut.kept).toEqual(report.kept.slice(0, cut.kept.length));
    expect(cut.foreign).toEqual(report.foreign); // the kept entries alone made room
    expect(cut.omitted).toEqual({ kept: 1000 - cut.kept.length, foreign: 0 });
    expect(bytes(cut)).toBeGreaterThan(limit - 100); // no more cut than needed (an entry is ~60 bytes)
    expect(cut).toMatchObject({ deleted: ['fs-deleted'], failed: report.failed, scanned: 1102 });

    const smaller = reportWithin(report, 2_000);
    expect(bytes(smaller)).toBeLessThanOrEqual(2_000);
    expect(smaller.kept).toEqual([]);
    expect(smaller.omitted).toEqual({ kept: 1000, foreign: 100 - smaller.foreign.length });
  });
});
