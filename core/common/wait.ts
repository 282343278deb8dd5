/**
 * The one poll loop: wait for something no API announces (a file system leaving `creating`, a mount target
 * gone, a process exited) with jittered backoff, a deadline and a stop signal, on an injected clock.
 */
import { backoffDelay, systemClock, type Clock } from './clock';
import { MountfleetError } from './errors';

/** Bounds and poll intervals of a wait. */
interface PollOptions {
  readonly clock?: Clock;
  /** Aborting ends the wait at once (the sleep is cut short); pollUntil then throws the signal's reason. */
  readonly signal?: AbortSignal;
  /** Each poll that is not done yet, with how long it has waited. */
  readonly onWaiting?: (state: string, waitedMs: number) => void;
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** First poll interval; doubles (with jitter) up to maxPollMs. */
  readonly initialPollMs: number;
  readonly maxPollMs: number;
  /** The jitter's draw in [0, 1): each interval is 50-100% of its step. `() => 1`: the whole step. @default Math.random */
  readonly random?: () => number;
}

/** The wait ran out: what was waited for was still in `state` after `waitedMs`. */
export class PollTimeout extends MountfleetError {
  override readonly name = 'PollTimeout';

  constructor(
    readonly state: string,
    readonly waitedMs: number,
  ) {
    super(`still ${state} after ${Math.round(waitedMs / 1000)} s`);
  }
}

/** A poll's answer: done with a value, or not yet, in a state worth reporting. */
export type PollResult<T> = { readonly value: T } | { readonly state: string };

/**
 * Calls `probe` until it returns a value, sleeping with backoff in between (never past the deadline);
 * throws PollTimeout at the deadline, and the signal's reason (or an AbortError) once it is aborted.
 */
export async function pollUntil<T>(probe: () => Promise<PollResult<T>>, options: PollOptions): Promise<T> {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    const result = await probe();
    if ('value' in result) return result.value;
    const waited = clock.now() - started;
    if (waited >= options.timeoutMs) throw new PollTimeout(result.state, waited);
    options.onWaiting?.(result.state, waited);
    const delay = backoffDelay(attempt, options.initialPollMs, options.maxPollMs, options.random);
    await clock.sleep(Math.min(delay, Math.max(0, options.timeoutMs - waited)), options.signal);
  }
}
