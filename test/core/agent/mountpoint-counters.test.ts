/**
 * One Mountpoint process's running totals, from OTLP requests encoded field by field (test/support/otlp-encode.ts)
 * and read by core/agent/otlp-reader.ts: what the agent's relay hands the agent.
 */
import { MountpointCounters } from '../../../core/agent/mountpoint-counters';
import { decodeMetricsRequest } from '../../../core/agent/otlp-reader';
import { exponentialHistogramMetric, request, sumMetric, TIME } from '../../support/otlp-encode';

const SINCE = '2026-11-26T00:00:00.000Z';
const SECOND = 1_000_000_000n;

const exportOf = (...metrics: Buffer[]) => decodeMetricsRequest(request(...metrics));

test("delta exports (Mountpoint's) add up: S3 requests per operation, errors, reads and their bytes, cache hits, FUSE requests", () => {
  const counters = new MountpointCounters(SINCE);
  const oneInterval = (time: bigint) =>
    exportOf(
      sumMetric('s3.request_count', 1, [
        { attributes: { s3_request: 'GetObject' }, value: 7, time },
        { attributes: { s3_request: 'HeadObject' }, value: 2, time },
      ]),
      sumMetric('s3.request_errors', 1, [
        { attributes: { s3_request: 'GetObject', http_status: '503' }, value: 1, time },
      ]),
      // Experimental metrics carry Mountpoint's `experimental.` prefix on the wire.
      sumMetric('experimental.fuse.cache_hit', 1, [{ value: 3, time }]),
      exponentialHistogramMetric('fuse.io_size', 1, [
        { attributes: { fuse_request: 'read' }, count: 5, sum: 5 * 131072, time },
        { attributes: { fuse_request: 'write' }, count: 9, sum: 999, time },
      ]),
      exponentialHistogramMetric('fuse.request_latency', 1, [
        { attributes: { fuse_request: 'read' }, count: 5, sum: 100, time },
        { attributes: { fuse_request: 'statfs' }, count: 1, sum: 3, time },
      ]),
      // Not counted: another histogram, and a gauge.
      exponentialHistogramMetric('s3.request_total_latency', 1, [
        { attributes: { s3_request: 'GetObject' }, count: 7, sum: 1e6, time },
      ]),
    );
  counters.record(oneInterval(TIME));
  counters.record(oneInterval(TIME + 10n * SECOND));
  expect(counters.snapshot()).toEqual({
    since: SINCE,
    exports: 2,
    lastPointAt: new Date(Number((TIME + 10n * SECOND) / 1_000_000n)).toISOString(),
    s3Requests: { GetObject: 14, HeadObject: 4 },
    s3RequestErrors: 2,
    reads: 10,
    readBytes: 10 * 131072,
    cacheHits: 6,
    fuseRequests: { read: 10, statfs: 2 },
  });
});

test('cumulative exports add only what grew, and start over when a series restarts (a new start time)', () => {
  const counters = new MountpointCounters(SINCE);
  const gets = (value: number, start: bigint, time: bigint) =>
    exportOf(
      sumMetric('s3.request_count', 2, [{ attributes: { s3_request: 'GetObject' }, value, start, time }]),
    );
  const reads = (count: number, sum: number, start: bigint, time: bigint) =>
    exportOf(
      exponentialHistogramMetric('fuse.io_size', 2, [
        { attributes: { fuse_request: 'read' }, count, sum, start, time },
      ]),
    );
  const start = TIME - 100n * SECOND;
  counters.record(gets(10, start, TIME));
  counters.record(gets(25, start, TIME + SECOND));
  counters.record(reads(4, 400, start, TIME));
  counters.record(reads(6, 700, start, TIME + SECOND));
  // The process restarted: its running total begins again from its own start.
  counters.record(gets(3, TIME + 2n * SECOND, TIME + 3n * SECOND));
  const snapshot = counters.snapshot();
  expect(snapshot.s3Requests).toEqual({ GetObject: 28 });
  expect(snapshot.reads).toBe(6);
  expect(snapshot.readBytes).toBe(700);
});

test('an export without data points counts as an export and changes no total', () => {
  const counters = new MountpointCounters(SINCE);
  counters.record(exportOf());
  expect(counters.snapshot()).toEqual({
    since: SINCE,
    exports: 1,
    s3Requests: {},
    s3RequestErrors: 0,
    reads: 0,
    readBytes: 0,
    cacheHits: 0,
    fuseRequests: {},
  });
});
