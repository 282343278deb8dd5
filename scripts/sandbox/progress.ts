/**
 * Step-by-step progress on stderr for the sandbox demo: a line when a step starts, a live elapsed-time
 * counter while it runs (on a terminal), and a line with its duration when it ends.
 */
export interface StepRecord {
  readonly title: string;
  readonly seconds: number;
  readonly ok: boolean;
  readonly detail?: string;
}

export class Progress {
  readonly steps: StepRecord[] = [];
  private readonly started = Date.now();
  private abortedBy: string | undefined;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  private stamp(): string {
    return `[${((Date.now() - this.started) / 1000).toFixed(1).padStart(5)}s]`;
  }

  note(message: string): void {
    this.out.write(`${this.stamp()}   ${message}\n`);
  }

  /** After this, every step that has not started yet fails at once (Ctrl-C: stop, then clean up). */
  abort(reason: string): void {
    this.abortedBy = reason;
  }

  get aborted(): boolean {
    return this.abortedBy !== undefined;
  }

  /** Runs one step, showing progress; rethrows its error after recording it. */
  async step<T>(title: string, run: () => Promise<T>, describe?: (result: T) => string): Promise<T> {
    if (this.abortedBy) throw new Error(`not started: ${this.abortedBy}`);
    const t0 = Date.now();
    this.out.write(`${this.stamp()} ▶ ${title}\n`);
    const ticker = this.out.isTTY
      ? setInterval(() => this.out.write(`\r          … ${((Date.now() - t0) / 1000).toFixed(0)} s\r`), 1000)
      : undefined;
    try {
      const result = await run();
      const seconds = (Date.now() - t0) / 1000;
      const detail = describe?.(result);
      this.steps.push({ title, seconds, ok: true, ...(detail ? { detail } : {}) });
      this.out.write(`${this.stamp()} ✓ ${title} (${seconds.toFixed(1)} s)${detail ? ` — ${detail}` : ''}\n`);
      return result;
    } catch (err) {
      const seconds = (Date.now() - t0) / 1000;
      this.steps.push({ title, seconds, ok: false, detail: (err as Error).message });
      this.out.write(`${this.stamp()} ✗ ${title} (${seconds.toFixed(1)} s): ${(err as Error).message}\n`);
      throw err;
    } finally {
      if (ticker) {
        clearInterval(ticker);
        this.out.write('\r\x1b[K');
      }
    }
  }
}
