/**
 * Runs Mountpoint processes without systemd (containers, AWS Batch, tests): each in the foreground as
 * our child, ready once its directory shows up in mountinfo, restarted with backoff when it dies, and
 * stopped with SIGTERM (then a lazy unmount of whatever it left behind).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { backoffDelay, systemClock, type Clock } from '../clock';
import { execCommand, type CommandRunner } from './cache-volume';
import { topMount } from './mountinfo';

/** Mountpoint waits 30 s for its own mount; we allow a little more before calling it a failure. */
export const READY_TIMEOUT_MS = 35_000;

export interface SupervisedSpec {
  readonly key: string;
  readonly mountPoint: string;
  /** Mountpoint's arguments in background form; the supervisor adds --foreground. */
  readonly args: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
}

export type SupervisorEvent =
  | { type: 'ready'; key: string; pid: number; mountId: number; restarts: number }
  | { type: 'exited'; key: string; code: number | null; signal: string | null; stderr: string }
  | { type: 'restart-scheduled'; key: string; inMs: number };

interface Entry {
  spec: SupervisedSpec;
  child?: ChildProcess;
  restarts: number;
  stopping: boolean;
  stderr: string;
}

export class Supervisor {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly mountS3: string,
    private readonly onEvent: (e: SupervisorEvent) => void = () => {},
    private readonly run: CommandRunner = execCommand,
    private readonly clock: Clock = systemClock,
    private readonly baseEnv: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Starts a process and resolves once it is mounted; rejects with Mountpoint's error if it fails. */
  async start(spec: SupervisedSpec): Promise<void> {
    const entry: Entry = { spec, restarts: 0, stopping: false, stderr: '' };
    this.entries.set(spec.key, entry);
    await this.launch(entry);
  }

  pid(key: string): number | undefined {
    return this.entries.get(key)?.child?.pid;
  }

  restarts(key: string): number {
    return this.entries.get(key)?.restarts ?? 0;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  private async launch(entry: Entry): Promise<void> {
    const { spec } = entry;
    mkdirSync(spec.mountPoint, { recursive: true });
    // A process that died leaves its mount behind (a dead FUSE connection for the real Mountpoint).
    if (topMount(spec.mountPoint)) await this.run('umount', ['-l', spec.mountPoint]).catch(() => '');
    const before = topMount(spec.mountPoint)?.id;
    const child = spawn(this.mountS3, ['--foreground', ...spec.args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...this.baseEnv, ...spec.environment },
    });
    entry.child = child;
    entry.stderr = '';
    child.stderr!.on('data', (d: Buffer) => (entry.stderr = (entry.stderr + d.toString()).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let ready = false;
    child.once('exit', (code, signal) => {
      this.onEvent({ type: 'exited', key: spec.key, code, signal, stderr: entry.stderr.trim() });
      // A process that never became ready is launch()'s failure to report, not a crash to restart.
      if (ready && !entry.stopping && entry.child === child) void this.restartLater(entry);
    });
    const deadline = this.clock.now() + READY_TIMEOUT_MS;
    for (;;) {
      const mounted = topMount(spec.mountPoint);
      if (mounted && mounted.id !== before) {
        ready = true;
        this.onEvent({
          type: 'ready',
          key: spec.key,
          pid: child.pid!,
          mountId: mounted.id,
          restarts: entry.restarts,
        });
        return;
      }
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${this.mountS3} for ${spec.mountPoint} exited (${child.exitCode ?? child.signalCode}): ${entry.stderr.trim()}`,
        );
      }
      if (this.clock.now() > deadline) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(
          `${this.mountS3} for ${spec.mountPoint} was not mounted within ${READY_TIMEOUT_MS} ms`,
        );
      }
      await this.clock.sleep(50);
    }
  }

  private async restartLater(entry: Entry): Promise<void> {
    for (;;) {
      const inMs = backoffDelay(Math.min(entry.restarts, 5), 1000, 30_000);
      this.onEvent({ type: 'restart-scheduled', key: entry.spec.key, inMs });
      await this.clock.sleep(inMs);
      if (entry.stopping) return;
      entry.restarts++;
      try {
        await this.launch(entry);
        return;
      } catch {
        // Not mounted this time (the exit event carried Mountpoint's error): back off and try again.
      }
    }
  }

  /** SIGTERM, up to 10 s to exit, then SIGKILL; finally detach anything still mounted there. */
  async stop(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.stopping = true;
    const child = entry.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    if (topMount(entry.spec.mountPoint))
      await this.run('umount', ['-l', entry.spec.mountPoint]).catch(() => '');
    this.entries.delete(key);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((k) => this.stop(k)));
  }
}
