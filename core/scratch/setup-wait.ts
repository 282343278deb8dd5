/**
 * Bounded waits for EFS, which has no waiters: poll with jittered backoff until a deadline, cut off at
 * once when the run is asked to stop.
 */
import { backoffDelay, systemClock, type Clock } from '../common';
import { checkInterrupted, ScratchSetupError } from './setup-errors';

/** Bounds and poll intervals of a wait. */
export interface WaitOptions {
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
  readonly onProgress?: (message: string) => void;
  /** Give up after this long. */
  readonly timeoutMs?: number;
  /** First poll interval; doubles (with jitter) up to maxPollMs. */
  readonly initialPollMs?: number;
  readonly maxPollMs?: number;
}

/**
 * Polls `probe` until it returns a value, sleeping with backoff in between; throws ScratchSetupError at
 * the deadline and ScratchInterrupted when the signal fires.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<{ readonly value: T } | { readonly state: string }>,
  options: WaitOptions,
  defaults: { timeoutMs: number; initialPollMs: number; maxPollMs: number },
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? defaults.timeoutMs;
  const started = clock.now();
  for (let attempt = 0; ; attempt++) {
    checkInterrupted(options.signal);
    const result = await probe();
    if ('value' in result) return result.value;
    const waited = clock.now() - started;
    if (waited >= timeoutMs) {
      throw new ScratchSetupError(
        `${what} is still ${result.state} after ${Math.round(waited / 1000)} s (limit ${Math.round(timeoutMs / 1000)} s)`,
      );
    }
    options.onProgress?.(`waiting for ${what} (${result.state}, ${Math.round(waited / 1000)} s)`);
    const delay = backoffDelay(
      attempt,
      options.initialPollMs ?? defaults.initialPollMs,
      options.maxPollMs ?? defaults.maxPollMs,
    );
    await clock.sleep(Math.min(delay, Math.max(0, timeoutMs - waited)), options.signal);
  }
}
