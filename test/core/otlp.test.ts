/**
 * core/otlp.ts on requests encoded field by field (test/support/otlp-encode.ts): the parts Mountpoint sends,
 * fields it may add later skipped by wire type, and a broken body refused.
 */
import { decodeMetricsRequest, OtlpDecodeError } from '../../core/otlp';
import { msg, request, str, sumMetric, TIME, u64, varint } from '../support/otlp-encode';

const keyValue = (no: number, key: string, value: Buffer) =>
  msg(no, Buffer.concat([str(1, key), msg(2, value)]));

test('attribute values of every scalar kind become strings; fields it does not know are skipped', () => {
  const point = Buffer.concat([
    keyValue(7, 'op', str(1, 'GetObject')),
    keyValue(7, 'retry', Buffer.concat([varint(2 << 3), varint(1)])),
    keyValue(7, 'status', Buffer.concat([varint(3 << 3), varint(503)])),
    keyValue(7, 'ratio', Buffer.concat([varint((4 << 3) | 1), Buffer.from(new Float64Array([0.5]).buffer)])),
    u64(3, TIME),
    Buffer.concat([varint((6 << 3) | 1), Buffer.from(new BigInt64Array([7n]).buffer)]),
    // exemplars (5) and flags (8): not read, skipped
    msg(5, str(1, 'exemplar')),
    Buffer.concat([varint(8 << 3), varint(1)]),
  ]);
  const metric = Buffer.concat([
    str(1, 's3.request_count'),
    str(2, 'a description'),
    str(3, '1'),
    msg(7, Buffer.concat([msg(1, point), varint(2 << 3), varint(1)])),
    // metadata (12), added in later OTLP versions
    msg(12, str(1, 'meta')),
  ]);
  expect(decodeMetricsRequest(request(metric))).toEqual([
    {
      name: 's3.request_count',
      kind: 'sum',
      temporality: 'delta',
      attributes: { op: 'GetObject', retry: 'true', status: '503', ratio: '0.5' },
      startTimeMs: 0,
      timeMs: Number(TIME / 1_000_000n),
      value: 7,
    },
  ]);
});

test('an empty request has no points; a truncated one is an OtlpDecodeError', () => {
  expect(decodeMetricsRequest(Buffer.alloc(0))).toEqual([]);
  const whole = request(sumMetric('s3.request_count', 1, [{ value: 1 }]));
  expect(() => decodeMetricsRequest(whole.subarray(0, whole.length - 3))).toThrow(OtlpDecodeError);
  expect(() => decodeMetricsRequest(Buffer.from([0x0f]))).toThrow(/wire type 7/);
});
