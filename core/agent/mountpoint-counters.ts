/**
 * Running totals of one Mountpoint process's own metrics, added up from its OTLP exports by the agent's
 * metrics relay: S3 requests per operation, reads through the mount and cache hits. `status --json` shows
 * them; `bench train` and `warm` take differences of them.
 */
import type { MetricPoint } from './otlp-reader';

/** What `status --json` shows per process (`processes[].metrics`). */
export interface ProcessMetrics {
  /** When the agent began counting this process (its totals start at zero then). */
  readonly since: string;
  /** OTLP exports received from the process. */
  readonly exports: number;
  /** Collection time of the newest data point received: every request finished before it is counted. */
  readonly lastPointAt?: string;
  /** Mountpoint's `s3.request_count`, per operation (`GetObject`, `HeadObject`, `ListObjectsV2`, …). */
  readonly s3Requests: Readonly<Record<string, number>>;
  /** Mountpoint's `s3.request_errors`, every operation and status. */
  readonly s3RequestErrors: number;
  /** FUSE reads served (`fuse.io_size` with `fuse_request` = `read`: its count). */
  readonly reads: number;
  /** Bytes those reads returned to applications (the same histogram's sum). Mountpoint exports no S3 byte count. */
  readonly readBytes: number;
  /** Mountpoint's `experimental.fuse.cache_hit`: reads served wholly from its data cache (local or Express). */
  readonly cacheHits: number;
  /** FUSE requests answered, per operation (`fuse.request_latency` counts: `lookup`, `open`, `read`, `statfs`, …). */
  readonly fuseRequests: Readonly<Record<string, number>>;
}

/**
 * Mountpoint exports its experimental metrics with an `experimental.` prefix (1.24: `experimental.fuse.cache_hit`);
 * the plain name is what it would be called once stable.
 */
const CACHE_HIT_NAMES = ['experimental.fuse.cache_hit', 'fuse.cache_hit'];

/**
 * Bounds on what the totals remember, since any local process can post exports to the relay under a
 * process's path (docs/security.md): the totals and the state file that shows them stay the same size
 * whatever is sent. Mountpoint names about 25 FUSE and 10 S3 operations (each under 32 characters) and
 * exports about 150 series.
 */
/** Operations kept by name per total; further ones, and longer names, are added up under `other`. */
export const MAX_OPERATIONS = 64;
export const MAX_OPERATION_NAME_LENGTH = 64;
/** Cumulative series whose last point is remembered; a further one is not counted. */
export const MAX_CUMULATIVE_SERIES = 1024;

interface Series {
  readonly startTimeMs: number;
  readonly values: readonly number[];
}

/** Adds up one process's exports. Delta points are added; cumulative ones add what grew since the last. */
export class MountpointCounters {
  private exports = 0;
  private lastPointMs = 0;
  // No prototype: an operation named `constructor` or `__proto__` is a name like any other.
  private readonly s3Requests: Record<string, number> = Object.create(null) as Record<string, number>;
  private s3RequestErrors = 0;
  private reads = 0;
  private readBytes = 0;
  private cacheHits = 0;
  private readonly fuseRequests: Record<string, number> = Object.create(null) as Record<string, number>;
  /** The last point of each cumulative series (name and attributes), to add only what grew. */
  private readonly cumulative = new Map<string, Series>();

  constructor(private readonly since: string) {}

  /** One export's points. */
  record(points: readonly MetricPoint[]): void {
    this.exports++;
    for (const p of points) {
      // Counters and histogram counts and sums are never negative: another point is not Mountpoint's.
      const numbers = p.histogram ? [p.histogram.count, p.histogram.sum] : [p.value ?? 0];
      if (!numbers.every((n) => Number.isFinite(n) && n >= 0)) continue;
      this.lastPointMs = Math.max(this.lastPointMs, p.timeMs);
      if (p.name === 's3.request_count') {
        const [n] = this.increase(p, [p.value ?? 0]);
        add(this.s3Requests, p.attributes.s3_request, n);
      } else if (p.name === 's3.request_errors') {
        this.s3RequestErrors += this.increase(p, [p.value ?? 0])[0];
      } else if (CACHE_HIT_NAMES.includes(p.name)) {
        this.cacheHits += this.increase(p, [p.value ?? 0])[0];
      } else if (p.name === 'fuse.io_size' && p.attributes.fuse_request === 'read' && p.histogram) {
        const [count, sum] = this.increase(p, [p.histogram.count, p.histogram.sum]);
        this.reads += count;
        this.readBytes += sum;
      } else if (p.name === 'fuse.request_latency' && p.histogram) {
        const [count] = this.increase(p, [p.histogram.count]);
        add(this.fuseRequests, p.attributes.fuse_request, count);
      }
    }
  }

  snapshot(): ProcessMetrics {
    return {
      since: this.since,
      exports: this.exports,
      ...(this.lastPointMs ? { lastPointAt: new Date(this.lastPointMs).toISOString() } : {}),
      s3Requests: { ...this.s3Requests },
      s3RequestErrors: this.s3RequestErrors,
      reads: this.reads,
      readBytes: this.readBytes,
      cacheHits: this.cacheHits,
      fuseRequests: { ...this.fuseRequests },
    };
  }

  /**
   * What a point adds. Delta (Mountpoint's default): the point itself. Cumulative (Mountpoint run with
   * its temporality preference set so): the growth since the series' last point, or the whole value when
   * the series is new or restarted (a new start time).
   */
  private increase(p: MetricPoint, values: readonly number[]): readonly number[] {
    if (p.temporality !== 'cumulative') return values;
    const key = `${p.name}\u0000${JSON.stringify(Object.entries(p.attributes).sort())}`;
    const last = this.cumulative.get(key);
    if (!last && this.cumulative.size >= MAX_CUMULATIVE_SERIES) return values.map(() => 0);
    this.cumulative.set(key, { startTimeMs: p.startTimeMs, values });
    if (!last || last.startTimeMs !== p.startTimeMs) return values;
    return values.map((v, i) => Math.max(0, v - last.values[i]));
  }
}

/** Adds `n` to `operation`'s total, under `other` once MAX_OPERATIONS names are kept or for a long name. */
function add(totals: Record<string, number>, operation = 'unknown', n: number): void {
  const known = Object.hasOwn(totals, operation);
  const key =
    known || (operation.length <= MAX_OPERATION_NAME_LENGTH && Object.keys(totals).length < MAX_OPERATIONS)
      ? operation
      : 'other';
  totals[key] = (totals[key] ?? 0) + n;
}
