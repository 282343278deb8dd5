/**
 * The job's metered bytes over time, from the mount's NFS counters (mountstats.ts) sampled at
 * each check: EFS meters reads at a third of their bytes and writes in full, and so does this.
 */
import { READ_METERING_FACTOR } from './model';
import type { NfsByteCounters } from './mountstats';

interface Sample {
  readonly at: number;
  readonly meteredBytes: number;
}

export class NfsMeter {
  private readonly samples: Sample[] = [];

  constructor(private readonly read: (() => NfsByteCounters | undefined) | undefined) {}

  /** Records the counters as they are at `now` (nothing when they cannot be read). */
  sample(now: number): void {
    let c: NfsByteCounters | undefined;
    try {
      c = this.read?.();
    } catch {
      return; // unreadable counters only make the guard rely on CloudWatch alone
    }
    if (c)
      this.samples.push({
        at: now,
        meteredBytes: c.serverReadBytes * READ_METERING_FACTOR + c.serverWriteBytes,
      });
  }

  /** Whether any sample was taken: the counters are readable on this mount. */
  get readable(): boolean {
    return this.samples.length > 0;
  }

  /** Metered bytes from time `at` to the last sample, interpolated between samples (0 without counters). */
  since(at: number): number {
    const s = this.samples;
    if (s.length === 0) return 0;
    const last = s.at(-1)!;
    let before = s[0];
    for (const x of s) if (x.at <= at) before = x;
    const after = s.find((x) => x.at > at) ?? last;
    const base =
      after.at > before.at && at > before.at
        ? before.meteredBytes +
          ((after.meteredBytes - before.meteredBytes) * (at - before.at)) / (after.at - before.at)
        : before.meteredBytes;
    return Math.max(0, last.meteredBytes - base);
  }

  /** Metered bytes per second between the last two samples; undefined with fewer than two. */
  lastRate(): number | undefined {
    if (this.samples.length < 2) return undefined;
    const [a, b] = this.samples.slice(-2);
    return b.at > a.at ? (b.meteredBytes - a.meteredBytes) / ((b.at - a.at) / 1000) : undefined;
  }
}
