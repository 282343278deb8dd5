/** Ctrl-C for commands that report what they measured before they stop (`bench train`, `warm`). */

/** Exit status after SIGINT (128 + 2), as a shell reports it. */
export const EXIT_INTERRUPTED = 130;

/**
 * Runs `body` with a signal that SIGINT or SIGTERM aborts, after writing `message` to stderr; the handlers
 * are removed when `body` settles, so a second Ctrl-C afterwards ends the process as usual.
 */
export async function interruptible<T>(
  message: string,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const stop = new AbortController();
  const onSignal = () => {
    process.stderr.write(`${message}\n`);
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await body(stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
