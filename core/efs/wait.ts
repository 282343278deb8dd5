/**
 * Bounded waits for EFS, which has no waiters: core/common/wait.ts's poll loop (jittered backoff until a
 * deadline, cut off at once when the run is asked to stop), in the words of a scratch run's setup.
 */
import { pollUntil, PollTimeout, type Clock, type PollResult } from '../common';
import { RunInterrupted, RunSetupError } from './setup-errors';

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
 * Polls `probe` until it returns a value, saying `waiting for <what> (<state>, N s)` between polls; throws
 * RunSetupError at the deadline and RunInterrupted when the signal fires.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<PollResult<T>>,
  options: WaitOptions,
  defaults: { timeoutMs: number; initialPollMs: number; maxPollMs: number },
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? defaults.timeoutMs;
  try {
    return await pollUntil(probe, {
      clock: options.clock,
      signal: options.signal,
      onWaiting: (state, waitedMs) =>
        options.onProgress?.(`waiting for ${what} (${state}, ${Math.round(waitedMs / 1000)} s)`),
      timeoutMs,
      initialPollMs: options.initialPollMs ?? defaults.initialPollMs,
      maxPollMs: options.maxPollMs ?? defaults.maxPollMs,
    });
  } catch (err) {
    if (err instanceof PollTimeout) {
      throw new RunSetupError(
        `${what} is still ${err.state} after ${Math.round(err.waitedMs / 1000)} s (limit ${Math.round(timeoutMs / 1000)} s)`,
      );
    }
    // The loop's own stop (not a probe cut off by it, which fails as the call failed).
    if (options.signal?.aborted && err === options.signal.reason) throw new RunInterrupted();
    throw err;
  }
}
