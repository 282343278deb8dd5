/**
 * MountpointCounters on exports that are not Mountpoint's: any local process can post to the relay under a
 * process's path, so what the totals remember stays bounded (operations, cumulative series), and a value no
 * counter can have (negative, NaN, infinite) does not poison them.
 */
import {
  MAX_CUMULATIVE_SERIES,
  MAX_OPERATION_NAME_LENGTH,
  MAX_OPERATIONS,
  MountpointCounters,
} from '../../../core/agent/mountpoint-counters';
import { decodeMetricsRequest } from '../../../core/agent/otlp-reader';
import { exponentialHistogramMetric, request, sumMetric, TIME } from '../../support/otlp-encode';

const exportOf = (...metrics: Buffer[]) => decodeMetricsRequest(request(...metrics));

test('exports naming ever new operations keep at most MAX_OPERATIONS names per total; the rest add up under `other`', () => {
  const counters = new MountpointCounters('2026-11-26T00:00:00.000Z');
  for (let round = 0; round < 20; round++) {
    counters.record(
      exportOf(
        sumMetric(
          's3.request_count',
          1,
          Array.from({ length: 100 }, (_, i) => ({
            attributes: { s3_request: `op-${round}-${i}` },
            value: 1,
          })),
        ),
        exponentialHistogramMetric(
          'fuse.request_latency',
          1,
          Array.from({ length: 100 }, (_, i) => ({
            attributes: { fuse_request: `f-${round}-${i}` },
            count: 1,
            sum: 1,
          })),
        ),
      ),
    );
  }
  const { s3Requests, fuseRequests } = counters.snapshot();
  expect(Object.keys(s3Requests)).toHaveLength(MAX_OPERATIONS + 1);
  expect(Object.keys(fuseRequests)).toHaveLength(MAX_OPERATIONS + 1);
  // Nothing is lost from the sums: 2,000 requests each.
  expect(Object.values(s3Requests).reduce((a, b) => a + b, 0)).toBe(2000);
  expect(s3Requests.other).toBe(2000 - MAX_OPERATIONS);
  expect(fuseRequests.other).toBe(2000 - MAX_OPERATIONS);
});

test('a long operation name, or one that is a property of every object, is a name like any other', () => {
  const counters = new MountpointCounters('2026-11-26T00:00:00.000Z');
  counters.record(
    exportOf(
      sumMetric('s3.request_count', 1, [
        { attributes: { s3_request: 'x'.repeat(MAX_OPERATION_NAME_LENGTH + 1) }, value: 2 },
        { attributes: { s3_request: 'constructor' }, value: 3 },
        { attributes: { s3_request: '__proto__' }, value: 4 },
        { attributes: { s3_request: 'GetObject' }, value: 5 },
      ]),
    ),
  );
  expect(counters.snapshot().s3Requests).toEqual({
    other: 2,
    constructor: 3,
    ['__proto__']: 4,
    GetObject: 5,
  });
  expect(JSON.parse(JSON.stringify(counters.snapshot())).s3Requests).toHaveProperty('constructor', 3);
});

test('at most MAX_CUMULATIVE_SERIES cumulative series are remembered; a further one is not counted', () => {
  const counters = new MountpointCounters('2026-11-26T00:00:00.000Z');
  const series = (n: number, offset: number) =>
    sumMetric(
      's3.request_errors',
      2,
      Array.from({ length: n }, (_, i) => ({ attributes: { http_status: String(offset + i) }, value: 1 })),
    );
  for (let offset = 0; offset < MAX_CUMULATIVE_SERIES; offset += 500)
    counters.record(exportOf(series(Math.min(500, MAX_CUMULATIVE_SERIES - offset), offset)));
  expect(counters.snapshot().s3RequestErrors).toBe(MAX_CUMULATIVE_SERIES);
  counters.record(exportOf(series(10, MAX_CUMULATIVE_SERIES)));
  expect(counters.snapshot().s3RequestErrors).toBe(MAX_CUMULATIVE_SERIES);
});

test('a negative, NaN or infinite value is not a counter: the point is left out and the totals stay numbers', () => {
  const counters = new MountpointCounters('2026-11-26T00:00:00.000Z');
  const gets = (value: number) =>
    sumMetric('s3.request_count', 1, [{ attributes: { s3_request: 'GetObject' }, value }]);
  counters.record(exportOf(gets(5), gets(-1_000_000)));
  counters.record(
    exportOf(
      exponentialHistogramMetric('fuse.io_size', 1, [
        { attributes: { fuse_request: 'read' }, count: 1, sum: NaN, time: TIME },
        { attributes: { fuse_request: 'read' }, count: 2, sum: Infinity, time: TIME },
        { attributes: { fuse_request: 'read' }, count: 3, sum: 300, time: TIME },
      ]),
    ),
  );
  expect(counters.snapshot()).toMatchObject({ s3Requests: { GetObject: 5 }, reads: 3, readBytes: 300 });
});
