/**
 * Reads the OTLP/HTTP metrics requests Mountpoint sends (`ExportMetricsServiceRequest`, binary protobuf) into
 * flat data points: the agent's metrics relay counts S3 requests per mount from them. Only what Mountpoint
 * uses is read (sums, gauges, histograms and exponential histograms with their attributes); everything
 * else is skipped by wire type, so a newer Mountpoint that sends more still decodes.
 *
 * The wire reader is this file's own (a few lines): @bufbuild/protobuf's would do, but its package ships no
 * licence file, and its BSD-3-Clause part asks for its notice in what the agent bundle ships.
 *
 * The bytes come from any local process (the relay listens on loopback for everyone), so reading them is
 * bounded in time and memory, whatever they hold:
 * - protobuf's own rules: a varint is at most 10 bytes (a longer one is refused at its 11th byte); a length
 *   is checked against the bytes left before anything is read; a tag is a 32-bit number with a field
 *   number of at least 1;
 * - every byte is looked at once per message level, and the levels are the fixed ones of the OTLP schema
 *   (fields this reader does not read are skipped by their length, never entered), so the work is linear in
 *   the input, with no recursion an input can deepen;
 * - a repeated scalar (a name sent twice, a timestamp sent 100,000 times) is kept by position and read
 *   once, last one wins as in protobuf; a oneof (a metric's data) likewise;
 * - what the reader keeps per export is capped (`OtlpLimits`: data points, attributes per point), so a
 *   valid but huge export is refused with OtlpLimitError instead of filling the agent's memory.
 */
import { MountfleetError } from '../common';

type Temporality = 'delta' | 'cumulative' | 'unspecified';

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

/**
 * What one export may hold. Mountpoint 1.24 documents 20 metrics whose attributes (`fuse_request`,
 * `s3_request`, `http_status`, `cache`, `priority`) have a few dozen values between them: about 150
 * series at most, one point each per export (delta temporality), with one or two attributes per point; a
 * busy mount's export has 45 points.
 */
export interface OtlpLimits {
  /**
   * Data points per export (every metric together). @default 500 — over 3 times Mountpoint's whole
   * documented series set.
   */
  readonly maxPoints: number;
  /**
   * Attributes per data point. @default 8 — Mountpoint sends at most 2. Together: at most 4,000
   * attributes for the reader to build per export, which with the relay's 128 KiB body cap keeps the worst
   * export to a few ms of decoding (bench/metrics-relay-hostile.ts).
   */
  readonly maxAttributesPerPoint: number;
}

const DEFAULT_OTLP_LIMITS: OtlpLimits = { maxPoints: 500, maxAttributesPerPoint: 8 };

/** The body is not an OTLP metrics request. */
export class OtlpDecodeError extends MountfleetError {
  override readonly name: string = 'OtlpDecodeError';
}

/** The body is a metrics request, but holds more than `OtlpLimits` allows. */
export class OtlpLimitError extends OtlpDecodeError {
  override readonly name: string = 'OtlpLimitError';
}

/** Protobuf's longest varint: 64 bits in 7-bit groups. */
const MAX_VARINT_BYTES = 10;

/** Wire types 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit; 3 and 4 (groups) are deprecated, 6 and 7 do not exist. */
const WIRE_TYPES = [true, true, true, false, false, true, false, false];

/** A part of the input: `[start, end)` of `buf`. Nothing is copied. */
interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * Reads one protobuf message's fields in order (wire types 0 varint, 1 64-bit, 2 length-delimited, 5
 * 32-bit) from `[start, end)` of `buf`. A varint is read into two 32-bit halves (`lo`, `hi`): no BigInt,
 * no allocation.
 */
class WireReader {
  private pos: number;
  /** The last varint read: bits 0–31 and 32–63, unsigned. */
  private lo = 0;
  private hi = 0;
  /** The field `tag()` read last. */
  fieldNo = 0;
  wireType = 0;

  private readonly end: number;

  constructor(
    private readonly buf: Buffer,
    span: Span,
  ) {
    this.pos = span.start;
    this.end = span.end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  private readVarint(): void {
    const buf = this.buf;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      if (pos >= this.end) throw new OtlpDecodeError(`truncated varint at byte ${this.pos}`);
      const b = buf[pos++];
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi = (b & 0x7f) >>> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32); // the 10th byte's bits past 64 fall off, as in protobuf
      if (b < 0x80) {
        this.pos = pos;
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw new OtlpDecodeError(
      `varint at byte ${this.pos} is longer than ${MAX_VARINT_BYTES} bytes (protobuf's limit)`,
    );
  }

  /** The next field's number and wire type, into `fieldNo` and `wireType`. */
  tag(): void {
    const at = this.pos;
    this.readVarint();
    if (this.hi !== 0) throw new OtlpDecodeError(`field tag at byte ${at} does not fit 32 bits`);
    this.fieldNo = this.lo >>> 3;
    this.wireType = this.lo & 7;
    if (this.fieldNo === 0) throw new OtlpDecodeError(`field number 0 at byte ${at}`);
    if (!WIRE_TYPES[this.wireType])
      throw new OtlpDecodeError(`unsupported protobuf wire type ${this.wireType} at byte ${at}`);
  }

  /** An unsigned varint as a number, for enums and flags (only its low 32 bits matter there). */
  uint32(): number {
    this.readVarint();
    return this.lo;
  }

  /** A varint as a signed 64-bit integer (AnyValue's int). */
  int64(): bigint {
    this.readVarint();
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo));
  }

  bool(): boolean {
    this.readVarint();
    return (this.lo | this.hi) !== 0;
  }

  /** A length-delimited field's span; its length is checked against what is left before anything is read. */
  span(): Span {
    const at = this.pos;
    this.readVarint();
    const left = this.end - this.pos;
    if (this.hi !== 0 || this.lo > left) {
      const length = this.hi !== 0 ? 'over 4 GiB' : String(this.lo);
      throw new OtlpDecodeError(
        `length ${length} at byte ${at} is more than the ${left} bytes left of its message`,
      );
    }
    const start = this.pos;
    this.pos += this.lo;
    return { start, end: this.pos };
  }

  /** The span of a fixed-width field (8 or 4 bytes). */
  fixed(width: 4 | 8): Span {
    if (this.end - this.pos < width) throw new OtlpDecodeError(`truncated ${width * 8}-bit field`);
    const start = this.pos;
    this.pos += width;
    return { start, end: this.pos };
  }

  /** Passes over a field the caller does not read: O(1) for every wire type but a varint's ≤ 10 bytes. */
  skip(wireType: number): void {
    if (wireType === 0) this.readVarint();
    else if (wireType === 1) this.fixed(8);
    else if (wireType === 2) this.span();
    else this.fixed(4); // 5: 32-bit
  }
}

/**
 * Calls `visit` for each field of one message; a field `visit` does not read is skipped. A wire type
 * protobuf does not have (or the deprecated groups) means the bytes are not a message.
 */
function eachField(
  buf: Buffer,
  span: Span,
  visit: (no: number, reader: WireReader, wireType: number) => boolean | void,
): void {
  if (span.start === span.end) return;
  const reader = new WireReader(buf, span);
  while (!reader.done) {
    reader.tag();
    if (visit(reader.fieldNo, reader, reader.wireType) !== true) reader.skip(reader.wireType);
  }
}

/** Calls `each` with every length-delimited field numbered `no` of one message. */
function eachMessage(buf: Buffer, span: Span, no: number, each: (message: Span) => void): void {
  eachField(buf, span, (n, r, wireType) => {
    if (n !== no || wireType !== 2) return false;
    each(r.span());
    return true;
  });
}

const text = (buf: Buffer, s: Span) => buf.toString('utf8', s.start, s.end);
const double = (buf: Buffer, s: Span) => buf.readDoubleLE(s.start);
/** A fixed64 count; above 2^53 it loses its last digits, as any JavaScript number does. */
const uint64 = (buf: Buffer, s: Span) => buf.readUInt32LE(s.start + 4) * 2 ** 32 + buf.readUInt32LE(s.start);
/** fixed64 nanoseconds → whole milliseconds, exactly. */
const nanosToMs = (buf: Buffer, s: Span) => Number(buf.readBigUInt64LE(s.start) / 1_000_000n);

const TEMPORALITY: Record<number, Temporality> = { 1: 'delta', 2: 'cumulative' };

/** AnyValue → string: string 1, bool 2, int 3, double 4 (arrays, maps and bytes are skipped, not entered). */
function anyValue(buf: Buffer, span: Span): string | undefined {
  let value: string | Span | undefined;
  eachField(buf, span, (no, r, wireType) => {
    if (no === 1 && wireType === 2) value = r.span();
    else if (no === 2 && wireType === 0) value = String(r.bool());
    else if (no === 3 && wireType === 0) value = String(r.int64());
    else if (no === 4 && wireType === 1) value = String(double(buf, r.fixed(8)));
    else return false;
    return true;
  });
  return typeof value === 'object' ? text(buf, value) : value;
}

/** KeyValue: key 1, value 2. */
function addAttribute(buf: Buffer, span: Span, out: Record<string, string>): void {
  let key: Span | undefined;
  let value: Span | undefined;
  eachField(buf, span, (no, r, wireType) => {
    if (wireType !== 2 || (no !== 1 && no !== 2)) return false;
    if (no === 1) key = r.span();
    else value = r.span();
    return true;
  });
  if (key === undefined || value === undefined) return;
  const v = anyValue(buf, value);
  if (v !== undefined) out[text(buf, key)] = v;
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
function point(buf: Buffer, span: Span, base: Base, layout: PointLayout, limits: OtlpLimits): MetricPoint {
  const keyValues: Span[] = [];
  let start: Span | undefined;
  let time: Span | undefined;
  let value: { span: Span; int: boolean } | undefined;
  let count: Span | undefined;
  let sum: Span | undefined;
  let min: Span | undefined;
  let max: Span | undefined;
  const histogram = base.kind === 'histogram';
  eachField(buf, span, (no, r, wireType) => {
    if (no === layout.attributes && wireType === 2) {
      if (keyValues.length === limits.maxAttributesPerPoint)
        throw new OtlpLimitError(
          `a data point of ${base.name} has more than ${limits.maxAttributesPerPoint} attributes`,
        );
      keyValues.push(r.span());
      return true;
    }
    if (wireType !== 1) return false; // every other field read is 64-bit
    if (no === 2) start = r.fixed(8);
    else if (no === 3) time = r.fixed(8);
    else if (!histogram && no === 4) value = { span: r.fixed(8), int: false };
    else if (!histogram && no === 6) value = { span: r.fixed(8), int: true };
    else if (histogram && no === 4) count = r.fixed(8);
    else if (histogram && no === 5) sum = r.fixed(8);
    else if (histogram && no === layout.min) min = r.fixed(8);
    else if (histogram && no === layout.max) max = r.fixed(8);
    else return false;
    return true;
  });
  const attributes: Record<string, string> = {};
  for (const kv of keyValues) addAttribute(buf, kv, attributes);
  const out: Mutable<MetricPoint> = {
    name: base.name,
    kind: base.kind,
    temporality: base.temporality,
    attributes,
    startTimeMs: start ? nanosToMs(buf, start) : 0,
    timeMs: time ? nanosToMs(buf, time) : 0,
  };
  if (!histogram) {
    out.value = !value
      ? 0
      : value.int
        ? Number(buf.readBigInt64LE(value.span.start))
        : double(buf, value.span);
    return out;
  }
  const h: Mutable<NonNullable<MetricPoint['histogram']>> = {
    count: count ? uint64(buf, count) : 0,
    sum: sum ? double(buf, sum) : 0,
  };
  if (min) h.min = double(buf, min);
  if (max) h.max = double(buf, max);
  out.histogram = h;
  return out;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Metric: name 1, one of gauge 5, sum 7, histogram 9, exponential histogram 10 (each: points 1, temporality 2). */
function metricPoints(buf: Buffer, span: Span, out: MetricPoint[], limits: OtlpLimits): void {
  let name: Span | undefined;
  let data: { kind: MetricPoint['kind']; layout: PointLayout; span: Span } | undefined;
  eachField(buf, span, (no, r, wireType) => {
    if (wireType !== 2) return false;
    if (no === 1) name = r.span();
    else if (no === 5) data = { kind: 'gauge', layout: NUMBER_POINT, span: r.span() };
    else if (no === 7) data = { kind: 'sum', layout: NUMBER_POINT, span: r.span() };
    else if (no === 9) data = { kind: 'histogram', layout: HISTOGRAM_POINT, span: r.span() };
    else if (no === 10) data = { kind: 'histogram', layout: EXPONENTIAL_HISTOGRAM_POINT, span: r.span() };
    else return false;
    return true;
  });
  if (!data) return;
  const { kind, layout } = data;
  let temporality: Temporality = 'unspecified';
  const points: Span[] = [];
  eachField(buf, data.span, (no, r, wireType) => {
    if (no === 1 && wireType === 2) {
      if (out.length + points.length === limits.maxPoints)
        throw new OtlpLimitError(`the export has more than ${limits.maxPoints} data points`);
      points.push(r.span());
    } else if (no === 2 && wireType === 0 && kind !== 'gauge')
      temporality = TEMPORALITY[r.uint32()] ?? 'unspecified';
    else return false;
    return true;
  });
  if (points.length === 0) return;
  const base: Base = { name: name ? text(buf, name) : '', kind, temporality };
  for (const p of points) out.push(point(buf, p, base, layout, limits));
}

/**
 * Every data point of an `ExportMetricsServiceRequest` (resource metrics 1 → scope metrics 2 → metrics 2).
 * Throws OtlpDecodeError for bytes that are not one, OtlpLimitError for one that holds more than `limits`.
 */
export function decodeMetricsRequest(body: Uint8Array, limits: Partial<OtlpLimits> = {}): MetricPoint[] {
  const all: OtlpLimits = { ...DEFAULT_OTLP_LIMITS, ...limits };
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const out: MetricPoint[] = [];
  try {
    eachMessage(buf, { start: 0, end: buf.length }, 1, (resource) =>
      eachMessage(buf, resource, 2, (scope) =>
        eachMessage(buf, scope, 2, (metric) => metricPoints(buf, metric, out, all)),
      ),
    );
  } catch (e) {
    if (e instanceof OtlpLimitError) throw e;
    const message = e instanceof OtlpDecodeError ? e.message : (e as Error).message;
    throw new OtlpDecodeError(`not an OTLP metrics request: ${message}`);
  }
  return out;
}
