/**
 * Reads the OTLP/HTTP metrics requests Mountpoint sends (`ExportMetricsServiceRequest`, binary protobuf) into
 * flat data points: the agent's metrics relay counts S3 requests per mount from them. Only what Mountpoint
 * uses is read (sums, gauges, histograms and exponential histograms with their attributes); everything
 * else is skipped by wire type, so a newer Mountpoint that sends more still decodes.
 *
 * The wire reader is this file's own (a few lines): @bufbuild/protobuf's would do, but its package ships no
 * licence file, and its BSD-3-Clause part asks for its notice in what the agent bundle ships.
 */

export type Temporality = 'delta' | 'cumulative' | 'unspecified';

/** One data point of one metric. */
export interface MetricPoint {
  readonly name: string;
  readonly kind: 'gauge' | 'sum' | 'histogram';
  /** Sums and histograms: whether a point holds the change since the last export or a running total. */
  readonly temporality: Temporality;
  /** Attribute values as strings (`s3_request` → `GetObject`). */
  readonly attributes: Readonly<Record<string, string>>;
  /** Start of the point's interval, Unix epoch milliseconds (0 when the exporter sent none). */
  readonly startTimeMs: number;
  /** When the point was collected, Unix epoch milliseconds. */
  readonly timeMs: number;
  /** Gauges and sums. */
  readonly value?: number;
  /** Histograms: how many values were recorded, their sum, and the smallest and largest when sent. */
  readonly histogram?: {
    readonly count: number;
    readonly sum: number;
    readonly min?: number;
    readonly max?: number;
  };
}

/** The body is not an OTLP metrics request. */
export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';
}

/** Reads one protobuf message's fields in order (wire types 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit). */
class WireReader {
  private pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = this.take(1)[0];
      value |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return value;
    }
  }

  /** A field's number and wire type. */
  tag(): [number, number] {
    const key = Number(this.varint());
    return [key >>> 3, key & 7];
  }

  bytes(): Uint8Array {
    return this.take(Number(this.varint()));
  }

  string(): string {
    return Buffer.from(this.bytes()).toString('utf8');
  }

  fixed64(): bigint {
    return Buffer.from(this.take(8)).readBigUInt64LE(0);
  }

  sfixed64(): bigint {
    return Buffer.from(this.take(8)).readBigInt64LE(0);
  }

  double(): number {
    return Buffer.from(this.take(8)).readDoubleLE(0);
  }

  /** Passes over a field the caller does not read. */
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.take(8);
    else if (wireType === 2) this.bytes();
    else this.take(4); // 5: 32-bit
  }

  private take(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) throw new Error('truncated protobuf');
    return this.buf.subarray(this.pos, (this.pos += n));
  }
}

const WIRE_TYPES = new Set([0, 1, 2, 5]);

/**
 * Calls `visit` for each field of one message; a field `visit` does not read is skipped. A wire type
 * protobuf does not have (or the deprecated groups) means the bytes are not a message.
 */
function eachField(
  bytes: Uint8Array,
  visit: (no: number, reader: WireReader, wireType: number) => boolean | void,
): void {
  const reader = new WireReader(bytes);
  while (!reader.done) {
    const [no, wireType] = reader.tag();
    if (!WIRE_TYPES.has(wireType)) throw new Error(`unsupported protobuf wire type ${wireType}`);
    if (visit(no, reader, wireType) !== true) reader.skip(wireType);
  }
}

/** The length-delimited fields numbered `no` of one message. */
function messages(bytes: Uint8Array, no: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  eachField(bytes, (n, r, wireType) => {
    if (n !== no || wireType !== 2) return false;
    out.push(r.bytes());
    return true;
  });
  return out;
}

const nanosToMs = (ns: bigint) => Number(ns / 1_000_000n);

const TEMPORALITY: Record<number, Temporality> = { 1: 'delta', 2: 'cumulative' };

/** AnyValue → string: string 1, bool 2, int 3, double 4 (arrays, maps and bytes are left out). */
function anyValue(bytes: Uint8Array): string | undefined {
  let value: string | undefined;
  eachField(bytes, (no, r) => {
    if (no === 1) value = r.string();
    else if (no === 2) value = String(r.varint() !== 0n);
    else if (no === 3) value = String(BigInt.asIntN(64, r.varint()));
    else if (no === 4) value = String(r.double());
    else return false;
    return true;
  });
  return value;
}

function attributesOf(keyValues: readonly Uint8Array[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of keyValues) {
    let key: string | undefined;
    let value: string | undefined;
    eachField(kv, (no, r) => {
      if (no === 1) key = r.string();
      else if (no === 2) value = anyValue(r.bytes());
      else return false;
      return true;
    });
    if (key !== undefined && value !== undefined) out[key] = value;
  }
  return out;
}

/** Field numbers of a data point's parts, per point message type. */
interface PointLayout {
  readonly attributes: number;
  readonly min?: number;
  readonly max?: number;
}
const NUMBER_POINT: PointLayout = { attributes: 7 };
const HISTOGRAM_POINT: PointLayout = { attributes: 9, min: 11, max: 12 };
const EXPONENTIAL_HISTOGRAM_POINT: PointLayout = { attributes: 1, min: 12, max: 13 };

type Base = Pick<MetricPoint, 'name' | 'kind' | 'temporality'>;

/**
 * One data point. Common fields: start 2 and time 3 (fixed64 ns). Number points: double 4, int 6
 * (sfixed64). Histogram points: count 4 (fixed64), sum 5 (double), min and max per layout.
 */
function point(bytes: Uint8Array, base: Base, layout: PointLayout): MetricPoint {
  const keyValues: Uint8Array[] = [];
  let startTimeMs = 0;
  let timeMs = 0;
  let value: number | undefined;
  let count = 0;
  let sum = 0;
  let min: number | undefined;
  let max: number | undefined;
  const histogram = base.kind === 'histogram';
  eachField(bytes, (no, r) => {
    if (no === layout.attributes) keyValues.push(r.bytes());
    else if (no === 2) startTimeMs = nanosToMs(r.fixed64());
    else if (no === 3) timeMs = nanosToMs(r.fixed64());
    else if (!histogram && no === 4) value = r.double();
    else if (!histogram && no === 6) value = Number(r.sfixed64());
    else if (histogram && no === 4) count = Number(r.fixed64());
    else if (histogram && no === 5) sum = r.double();
    else if (histogram && no === layout.min) min = r.double();
    else if (histogram && no === layout.max) max = r.double();
    else return false;
    return true;
  });
  return {
    ...base,
    attributes: attributesOf(keyValues),
    startTimeMs,
    timeMs,
    ...(histogram
      ? {
          histogram: {
            count,
            sum,
            ...(min !== undefined ? { min } : {}),
            ...(max !== undefined ? { max } : {}),
          },
        }
      : { value: value ?? 0 }),
  };
}

/** Metric: name 1, gauge 5, sum 7, histogram 9, exponential histogram 10 (each: points 1, temporality 2). */
function metricPoints(bytes: Uint8Array): MetricPoint[] {
  let name = '';
  const data: { kind: MetricPoint['kind']; layout: PointLayout; bytes: Uint8Array }[] = [];
  eachField(bytes, (no, r) => {
    if (no === 1) name = r.string();
    else if (no === 5) data.push({ kind: 'gauge', layout: NUMBER_POINT, bytes: r.bytes() });
    else if (no === 7) data.push({ kind: 'sum', layout: NUMBER_POINT, bytes: r.bytes() });
    else if (no === 9) data.push({ kind: 'histogram', layout: HISTOGRAM_POINT, bytes: r.bytes() });
    else if (no === 10)
      data.push({ kind: 'histogram', layout: EXPONENTIAL_HISTOGRAM_POINT, bytes: r.bytes() });
    else return false;
    return true;
  });
  return data.flatMap(({ kind, layout, bytes: d }) => {
    let temporality: Temporality = 'unspecified';
    const points: Uint8Array[] = [];
    eachField(d, (no, r) => {
      if (no === 1) points.push(r.bytes());
      else if (no === 2 && kind !== 'gauge') temporality = TEMPORALITY[Number(r.varint())] ?? 'unspecified';
      else return false;
      return true;
    });
    return points.map((p) => point(p, { name, kind, temporality }, layout));
  });
}

/** Every data point of an `ExportMetricsServiceRequest` (resource metrics 1 → scope metrics 2 → metrics 2). */
export function decodeMetricsRequest(body: Uint8Array): MetricPoint[] {
  try {
    return messages(body, 1)
      .flatMap((resource) => messages(resource, 2))
      .flatMap((scope) => messages(scope, 2))
      .flatMap(metricPoints);
  } catch (e) {
    throw new OtlpDecodeError(`not an OTLP metrics request: ${(e as Error).message}`);
  }
}
