/** The one way a long command turns SIGINT and SIGTERM into a stop (scratch run, up, shard, bench train, warm). */

type StopSignalName = 'SIGINT' | 'SIGTERM';

interface StopSignals {
  /** Aborted by the first SIGINT or SIGTERM, with the signal's name as its reason. */
  readonly signal: AbortSignal;
  /** Removes the handlers: a signal after this ends the process as usual. */
  dispose(): void;
}

/**
 * Hooks SIGINT and SIGTERM until dispose(): the first aborts `signal`; `say` is told each one (first or not),
 * to print what happens now.
 */
export function stopOnSignals(say?: (name: StopSignalName, first: boolean) => void): StopSignals {
  const stop = new AbortController();
  const onSignal = (name: StopSignalName) => {
    const first = !stop.signal.aborted;
    say?.(name, first);
    if (first) stop.abort(name);
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    signal: stop.signal,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

/**
 * As stopOnSignals, but the handlers go at the first signal (after `say` is told it): a second SIGINT or
 * SIGTERM ends the process as usual, which stops a stop that hangs.
 */
export function stopOnFirstSignal(say?: (name: StopSignalName) => void): StopSignals {
  const stops: StopSignals = stopOnSignals((name, first) => {
    if (!first) return;
    say?.(name);
    stops.dispose();
  });
  return stops;
}

/**
 * Runs `body` with a signal that the first SIGINT or SIGTERM aborts, after writing `message` to stderr; the
 * handlers go then (or when `body` settles), so a second Ctrl-C ends the process as usual. For commands that
 * report what they measured before they stop.
 */
export async function interruptible<T>(
  message: string,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const stops = stopOnFirstSignal(() => process.stderr.write(`${message}\n`));
  try {
    return await body(stops.signal);
  } finally {
    stops.dispose();
  }
}
