/**
 * Samples whose reads stay in flight until the test lets them finish: FIFOs the test holds open read-write (so
 * that a reader's open does not wait for a writer), counted from /proc while a process is blocked reading them.
 * How the read paths (bench train's workers, warm --parallel) are shown to have N reads in flight at once.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** read(2)'s number in /proc/<pid>/task/<tid>/syscall. */
const READ_SYSCALL = ({ x64: 0, arm64: 63 } as Record<string, number>)[process.arch];

/** Entries of a /proc directory, or none once the process is gone (or not there yet). */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Where a descriptor of `pid` points, or undefined if it went meanwhile. */
function target(pid: number | 'self', fd: string | number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
}

export class HeldFifos {
  /** The samples' paths. */
  readonly paths: readonly string[];
  private readonly held: Map<string, number>;

  constructor(dir: string, count: number) {
    this.paths = Array.from({ length: count }, (_, i) => join(dir, `sample-${i}`));
    execFileSync('mkfifo', this.paths);
    this.held = new Map(this.paths.map((path) => [path, openSync(path, 'r+')]));
  }

  /** Threads of `pid` blocked reading one of the samples right now. */
  beingRead(pid: number | 'self'): number {
    const paths = new Set(this.paths);
    let reading = 0;
    for (const tid of entries(`/proc/${pid}/task`)) {
      try {
        const [call, fd] = readFileSync(`/proc/${pid}/task/${tid}/syscall`, 'utf8').split(' ');
        if (Number(call) === READ_SYSCALL && paths.has(target(pid, Number(fd)) ?? '')) reading++;
      } catch {
        // The thread went meanwhile: it is not reading a sample now.
      }
    }
    return reading;
  }

  /** Gives each sample `pid` has opened its `bytes` and its end; true once every sample has been let go. */
  finishOpenedBy(pid: number | 'self', bytes = 100): boolean {
    for (const [path, fd] of this.held) {
      const opened = entries(`/proc/${pid}/fd`).filter((d) => target(pid, d) === path).length;
      // This process holds one descriptor of its own on each sample.
      if (opened > (pid === 'self' ? 1 : 0)) {
        writeSync(fd, Buffer.alloc(bytes));
        closeSync(fd);
        this.held.delete(path);
      }
    }
    return this.held.size === 0;
  }

  /** Lets go of the samples nobody opened. */
  close(): void {
    for (const fd of this.held.values()) closeSync(fd);
    this.held.clear();
  }
}
