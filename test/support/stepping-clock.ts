/**
 * A clock for code that polls with Clock.sleep (core/common/clock.ts), moved by the test or bench instead of by time:
 * `step()` waits until the code sleeps, lets that sleep's time pass at once, and returns when the code
 * sleeps again (its work between two sleeps done). Events, not fixed waits.
 */
import type { Clock } from '../../core/common/clock';

export interface SteppingClock extends Clock {
  /** Waits until the code sleeps, ends that sleep, and waits until it sleeps again. */
  step(): Promise<void>;
  /** Resolves once the code is sleeping. */
  sleeping(): Promise<void>;
}

/** A clock the test moves: `step()` waits until the guard sleeps, then lets that sleep's time pass. */
export function steppingClock(start: number): SteppingClock {
  let now = start;
  let pending: { ms: number; resolve: () => void } | undefined;
  let onSleep: (() => void) | undefined;
  const sleeping = () => (pending ? Promise.resolve() : new Promise<void>((resolve) => (onSleep = resolve)));
  const clock: SteppingClock = {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        signal?.addEventListener('abort', done, { once: true });
        pending = { ms, resolve: done };
        onSleep?.();
        onSleep = undefined;
      }),
    async step() {
      await sleeping();
      const p = pending!;
      pending = undefined;
      now += p.ms;
      p.resolve();
      await sleeping(); // the check is done once the guard sleeps again
    },
    sleeping,
  };
  return clock;
}
