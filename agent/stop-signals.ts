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
 * As stopOnSignals, but each of SIGINT and SIGTERM is handled once (`say` is told, the first aborts `signal`):
 * the same signal again ends the process as usual, which cuts short a stop that hangs.
 */
export function stopOnSignalsOnce(say?: (name: StopSignalName) => void): StopSignals {
  const stop = new AbortController();
  const onSignal = (name: StopSignalName) => {
    say?.(name);
    if (!stop.signal.aborted) stop.abort(name);
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  return {
    signal: stop.signal,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

/**
 * Runs `body` with a signal that the first SIGINT or SIGTERM aborts, after writing `message` to stderr; each
 * is handled once (and not after `body` settles), so a second Ctrl-C ends the process as usual. For commands
 * that report what they measured before they stop.
 */
export async function interruptible<T>(
  message: string,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const stops = stopOnSignalsOnce(() => process.stderr.write(`${message}\n`));
  try {
    return await body(stops.signal);
  } finally {
    stops.dispose();
  }
}
