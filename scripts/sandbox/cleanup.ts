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

  /**
   * On SIGINT/SIGTERM: tell the caller (so it starts nothing new), clean up, exit with 128 + signal.
   * Ctrl-C reaches every process of the foreground group (npx, tsx, node), so the signal often arrives
   * twice: later ones must not interrupt the cleanup.
   */
  onSignals(
    log: (message: string) => void,
    onSignal: (signal: NodeJS.Signals) => void,
    exit: (code: number) => never,
  ): void {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      onSignal(signal);
      log(`${signal} received: stopping everything the sandbox started`);
      void this.runAll(log).then(() => exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  }
}
