/**
 * Test-side OTLP encoding, field by field from the OTLP protobuf definitions (opentelemetry-proto
 * metrics/v1), independent of core/agent/otlp-reader.ts's reader: requests shaped like the ones Mountpoint sends.
 */
export const varint = (n: number): Buffer => {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return Buffer.from(out);
};
export const msg = (no: number, body: Buffer): Buffer =>
  Buffer.concat([varint((no << 3) | 2), varint(body.length), body]);
export const str = (no: number, s: string): Buffer => msg(no, Buffer.from(s, 'utf8'));
export const fixed64 = (no: number, write: (b: Buffer) => void): Buffer => {
  const b = Buffer.alloc(8);
  write(b);
  return Buffer.concat([varint((no << 3) | 1), b]);
};
export const dbl = (no: number, v: number) => fixed64(no, (b) => b.writeDoubleLE(v));
export const u64 = (no: number, v: bigint) => fixed64(no, (b) => b.writeBigUInt64LE(v));
export const attr = (k: string, v: string) => msg(7, Buffer.concat([str(1, k), msg(2, str(1, v))]));

export const TIME = 1_795_000_000_000n * 1_000_000n;

export function request(...metrics: Buffer[]): Buffer {
  return msg(1, msg(2, Buffer.concat(metrics.map((m) => msg(2, m)))));
}

const varintField = (no: number, v: number) => Buffer.concat([varint(no << 3), varint(v)]);

/** AggregationTemporality: 1 delta (Mountpoint's), 2 cumulative. */
export type Temporality = 1 | 2;

/** A monotonic sum: one int point per entry of `points` (attributes, value, start and collection ns). */
export function sumMetric(
  name: string,
  temporality: Temporality,
  points: readonly { attributes?: Record<string, string>; value: number; start?: bigint; time?: bigint }[],
): Buffer {
  const encoded = points.map((p) =>
    msg(
      1,
      Buffer.concat([
        ...Object.entries(p.attributes ?? {}).map(([k, v]) => attr(k, v)),
        u64(2, p.start ?? TIME - 10_000_000_000n),
        u64(3, p.time ?? TIME),
        fixed64(6, (b) => b.writeBigInt64LE(BigInt(p.value))),
      ]),
    ),
  );
  return Buffer.concat([
    str(1, name),
    msg(7, Buffer.concat([...encoded, varintField(2, temporality), varintField(3, 1)])),
  ]);
}

/** An exponential histogram (what Mountpoint sends for latencies and sizes): count and sum per point. */
export function exponentialHistogramMetric(
  name: string,
  temporality: Temporality,
  points: readonly {
    attributes?: Record<string, string>;
    count: number;
    sum: number;
    start?: bigint;
    time?: bigint;
  }[],
): Buffer {
  const encoded = points.map((p) =>
    msg(
      1,
      Buffer.concat([
        ...Object.entries(p.attributes ?? {}).map(([k, v]) =>
          msg(1, Buffer.concat([str(1, k), msg(2, str(1, v))])),
        ),
        u64(2, p.start ?? TIME - 10_000_000_000n),
        u64(3, p.time ?? TIME),
        u64(4, BigInt(p.count)),
        dbl(5, p.sum),
      ]),
    ),
  );
  return Buffer.concat([str(1, name), msg(10, Buffer.concat([...encoded, varintField(2, temporality)]))]);
}

/** A request with `n` sum points of one metric, each with its own `s3_request` value: `n` series. */
export function manyPoints(n: number): Buffer {
  return request(
    sumMetric(
      's3.request_count',
      1,
      Array.from({ length: n }, (_, i) => ({ attributes: { s3_request: `op${i}` }, value: 1 })),
    ),
  );
}

/**
 * An AnyValue nested `depth` deep (array_value 5 → ArrayValue values 1 → AnyValue …) around a string: a
 * valid attribute value a recursive reader would have to descend.
 */
export function nestedAnyValue(depth: number): Buffer {
  let value = str(1, 'leaf');
  for (let i = 0; i < depth; i++) value = msg(5, msg(1, value));
  return value;
}
