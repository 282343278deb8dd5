/** Time as an argument: runtime code takes a Clock so tests and benches can control it. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** Exponential backoff with jitter (50-100% of the step), capped: attempt 0 → about `initialMs`. */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number = Math.random,
) {
  const step = Math.min(maxMs, initialMs * 2 ** attempt);
  return Math.round(step * (0.5 + random() / 2));
}
