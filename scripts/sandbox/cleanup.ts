/**
 * Everything the sandbox starts registers how to stop it here; cleanups run last-in first-out on normal
 * exit, on error and on Ctrl-C / SIGTERM, so no process or port is left behind.
 */
type Cleanup = { readonly what: string; readonly run: () => Promise<void> | void };

export class Cleanups {
  private readonly stack: Cleanup[] = [];
  private running: Promise<void> | undefined;

  add(what: string, run: () => Promise<void> | void): void {
    this.stack.push({ what, run });
  }

  /** Runs every cleanup once (later calls wait for the first run); errors are reported, not thrown. */
  runAll(log: (message: string) => void): Promise<void> {
    this.running ??= (async () => {
      while (this.stack.length) {
        const c = this.stack.pop()!;
        try {
          await c.run();
        } catch (err) {
          log(`cleanup "${c.what}" failed: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }

  /** On SIGINT/SIGTERM: clean up, then exit with 128 + signal number. */
  onSignals(log: (message: string) => void): void {
    const handler = (signal: NodeJS.Signals) => {
      log(`${signal} received: stopping everything the sandbox started`);
      void this.runAll(log).then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
  }
}
