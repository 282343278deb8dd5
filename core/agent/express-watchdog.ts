/**
 * Watches the zone's Express cache with a probe on a fixed cadence and reports state changes with
 * hysteresis: `failuresToTrip` failed probes in a row mark it down (one slow answer is not an outage),
 * `successesToRecover` good ones mark it up again (no flapping back into a zone that is half there).
 */
import { systemClock, type Clock } from '../common';
import type { ProbeResult } from './express-probe';

interface WatchdogOptions {
  /** One probe; it should end at once when `cancel` aborts (the watchdog is stopping). */
  readonly probe: (cancel: AbortSignal) => Promise<ProbeResult>;
  readonly intervalMs: number;
  /** @default 2 */
  readonly failuresToTrip?: number;
  /** @default 3 */
  readonly successesToRecover?: number;
  /** The state before the first probe (from the pre-mount probe). */
  readonly initiallyHealthy: boolean;
  /** Called on every change, after the probe that decided it. */
  readonly onChange: (healthy: boolean, evidence: WatchdogEvidence) => Promise<void> | void;
  readonly onProbe?: (result: ProbeResult) => void;
  readonly clock?: Clock;
}

export interface WatchdogEvidence {
  /** The probes that decided the change, oldest first. */
  readonly probes: readonly ProbeResult[];
  /** When the first of them started (ms since epoch): the earliest sign of the change. */
  readonly firstSignAt: number;
  readonly decidedAt: number;
}

export class ExpressWatchdog {
  private healthyState: boolean;
  private streak: { result: ProbeResult; startedAt: number }[] = [];

  constructor(private readonly options: WatchdogOptions) {
    this.healthyState = options.initiallyHealthy;
  }

  get healthy(): boolean {
    return this.healthyState;
  }

  /** Probes until the signal aborts. A probe never overlaps the next: slow probes stretch the cadence. */
  async run(signal: AbortSignal): Promise<void> {
    const clock = this.options.clock ?? systemClock;
    while (!signal.aborted) {
      const startedAt = clock.now();
      const result = await this.options.probe(signal);
      if (signal.aborted) return;
      await this.record(result, startedAt, clock.now());
      await clock.sleep(Math.max(0, startedAt + this.options.intervalMs - clock.now()), signal);
    }
  }

  /** Feeds one probe result; exposed for the cadence-free unit tests. */
  async record(result: ProbeResult, startedAt: number, now: number): Promise<void> {
    this.options.onProbe?.(result);
    if (result.healthy === this.healthyState) {
      this.streak = [];
      return;
    }
    this.streak.push({ result, startedAt });
    const needed = this.healthyState
      ? (this.options.failuresToTrip ?? 2)
      : (this.options.successesToRecover ?? 3);
    if (this.streak.length < needed) return;
    const evidence: WatchdogEvidence = {
      probes: this.streak.map((s) => s.result),
      firstSignAt: this.streak[0].startedAt,
      decidedAt: now,
    };
    this.healthyState = result.healthy;
    this.streak = [];
    await this.options.onChange(this.healthyState, evidence);
  }
}
