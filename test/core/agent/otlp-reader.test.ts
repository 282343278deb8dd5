/**
 * core/agent/otlp-reader.ts on requests encoded field by field (test/support/otlp-encode.ts): the parts Mountpoint sends,
 * fields it may add later skipped by wire type, a broken body refused, and bytes from anyone (the relay
 * takes posts from every local process) read within protobuf's rules and the reader's caps.
 */
import { decodeMetricsRequest, OtlpDecodeError, OtlpLimitError } from '../../../core/agent/otlp-reader';
import {
  attr,
  manyPoints,
  msg,
  nestedAnyValue,
  request,
  str,
  sumMetric,
  TIME,
  u64,
  varint,
} from '../../support/otlp-encode';

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

test("a varint longer than protobuf's 10 bytes is refused at its 11th byte, whatever follows", () => {
  // A length of 11 bytes: ten continuation bytes, then a last one.
  const eleven = Buffer.concat([Buffer.from([0x0a]), Buffer.alloc(10, 0x80), Buffer.from([0x01])]);
  expect(() => decodeMetricsRequest(eleven)).toThrow(/varint at byte 1 is longer than 10 bytes/);
  // Ten bytes is the most a varint may have: a tag of 10 bytes whose value fits 32 bits is read.
  const tenByteTag = Buffer.from([0x88, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00]);
  expect(decodeMetricsRequest(tenByteTag)).toEqual([]);
});

test('1 MiB of 0xff bytes (one endless varint) is refused at once: its first varint is longer than 10 bytes', () => {
  const body = Buffer.alloc(1024 * 1024, 0xff);
  expect(() => decodeMetricsRequest(body)).toThrow(/longer than 10 bytes/);
  // The same inside a message: the first varint of the nested bytes.
  expect(() => decodeMetricsRequest(msg(1, msg(2, Buffer.alloc(64 * 1024, 0xff))))).toThrow(
    /longer than 10 bytes/,
  );
});

test('a length is checked against the bytes left of its message before anything is read', () => {
  // Field 1 of the request claims 2^62 bytes; and a metric claims more than its scope holds.
  const huge = Buffer.concat([
    varint((1 << 3) | 2),
    Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]),
  ]);
  expect(() => decodeMetricsRequest(huge)).toThrow(
    /length over 4 GiB at byte 1 is more than the 0 bytes left/,
  );
  const scope = Buffer.concat([varint((2 << 3) | 2), varint(100), Buffer.alloc(10)]);
  expect(() => decodeMetricsRequest(msg(1, msg(2, scope)))).toThrow(
    /length 100 .* more than the 10 bytes left/,
  );
  // Field number 0 and a tag past 32 bits are not protobuf either.
  expect(() => decodeMetricsRequest(Buffer.from([0x02, 0x00]))).toThrow(/field number 0/);
  expect(() => decodeMetricsRequest(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]))).toThrow(
    /does not fit 32 bits/,
  );
});

test('a valid export with more data points than the cap is refused as too large, at the first point past it', () => {
  expect(decodeMetricsRequest(manyPoints(500))).toHaveLength(500);
  expect(() => decodeMetricsRequest(manyPoints(501))).toThrow(OtlpLimitError);
  expect(() => decodeMetricsRequest(manyPoints(501))).toThrow(/more than 500 data points/);
  // The cap counts every metric of the export together, and can be set lower.
  const two = request(sumMetric('a', 1, [{ value: 1 }, { value: 2 }]), sumMetric('b', 1, [{ value: 3 }]));
  expect(() => decodeMetricsRequest(two, { maxPoints: 2 })).toThrow(/more than 2 data points/);
  // An OtlpLimitError is an OtlpDecodeError too: whoever only knows the latter still refuses the body.
  expect(() => decodeMetricsRequest(manyPoints(501))).toThrow(OtlpDecodeError);
});

test('a data point with more attributes than the cap is refused as too large', () => {
  const point = (n: number) =>
    msg(1, Buffer.concat([...Array.from({ length: n }, (_, i) => attr(`k${i}`, 'v')), u64(3, TIME)]));
  const metric = (n: number) => request(Buffer.concat([str(1, 'm'), msg(7, point(n))]));
  expect(decodeMetricsRequest(metric(8))[0].attributes).toHaveProperty('k7', 'v');
  expect(() => decodeMetricsRequest(metric(9))).toThrow(OtlpLimitError);
  expect(() => decodeMetricsRequest(metric(9))).toThrow(/a data point of m has more than 8 attributes/);
});

test('nesting the schema does not have is skipped, not entered: a 2,000-deep attribute value, repeated fields', () => {
  const deep = msg(7, Buffer.concat([str(1, 'deep'), msg(2, nestedAnyValue(2000))]));
  const point = msg(1, Buffer.concat([deep, attr('s3_request', 'GetObject'), u64(3, TIME)]));
  // A metric whose name and data come many times over: the last one counts, as in protobuf.
  const metric = Buffer.concat([
    ...Array.from({ length: 1000 }, (_, i) => str(1, `name${i}`)),
    ...Array.from({ length: 1000 }, () => msg(5, msg(1, Buffer.alloc(0)))), // more than the point cap
    msg(7, point),
  ]);
  expect(decodeMetricsRequest(request(metric))).toEqual([
    expect.objectContaining({ name: 'name999', kind: 'sum', attributes: { s3_request: 'GetObject' } }),
  ]);
});
