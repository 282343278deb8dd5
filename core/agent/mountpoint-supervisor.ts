/**
 * Runs Mountpoint processes without systemd (containers, AWS Batch, tests): each in the foreground as
 * our child, ready once its directory shows up in mountinfo, restarted with backoff when it dies, and
 * stopped with SIGTERM (then a lazy unmount of the mount it made, if it left it behind).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { untrustedConfiguredPathProblem, sameMount, topMount, type MountEntry } from '../system';
import { PollTimeout, backoffDelay, pollUntil, systemClock, type Clock, type PollResult } from '../common';
import { prepareCacheDirectory } from './cache-volume-setup';
import { execCommand, type CommandRunner } from './command-runner';
import { MOUNTPOINT_OOM_SCORE_ADJ } from './systemd-units';

/** Mountpoint waits 30 s for its own mount; we allow a little more before calling it a failure. */
const READY_TIMEOUT_MS = 35_000;
/** First restart after a crash within 125-250 ms, doubling per failed try up to 30 s. */
const RESTART_INITIAL_MS = 250;
const RESTART_MAX_MS = 30_000;
/** A process that stayed up this long crashed on its own: its restart backoff starts over. */
const STABLE_RUN_MS = 60_000;
/** SIGTERM first; a process still running after this gets SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;

interface SupervisedSpec {
  readonly key: string;
  readonly mountPoint: string;
  /** Mountpoint's arguments in background form; the supervisor adds --foreground. */
  readonly args: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  /** `--cache` directory: Mountpoint refuses to start unless it exists, so it is made before every start. */
  readonly cacheDirectory?: string;
}

type SupervisorEvent =
  | { type: 'ready'; key: string; pid: number; mountId: number; restarts: number }
  | { type: 'exited'; key: string; code: number | null; signal: string | null; stderr: string }
  | { type: 'restart-scheduled'; key: string; inMs: number }
  | { type: 'restart-failed'; key: string; error: string }
  | { type: 'detach-failed'; key: string; error: string }
  | { type: 'oom-adjust-failed'; key: string; error: string };

interface Entry {
  readonly spec: SupervisedSpec;
  /** Aborted by stop(): ends the readiness wait and the restart backoff at once. */
  readonly stopped: AbortController;
  child?: ChildProcess;
  /** The mount the current (or last) process made, as mountinfo showed it once ready. */
  mount?: MountEntry;
  readyAt?: number;
  restarts: number;
  /** Consecutive restarts since the last stable run: the backoff step. */
  attempt: number;
  stderr: string;
  /** Pending restart loop, awaited by stop() so nothing outlives it. */
  restarting?: Promise<void>;
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
    const entry: Entry = { spec, stopped: new AbortController(), restarts: 0, attempt: 0, stderr: '' };
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
    // First detach the dead FUSE mount a killed process leaves: every access to the path, mkdir's
    // included, fails with ENOTCONN ("Transport endpoint is not connected") until it is gone.
    await this.detachOwnMount(entry);
    // Asked again before every (re)start: a restart may come days after `up` checked the path.
    const untrusted = untrustedConfiguredPathProblem(spec.mountPoint);
    if (untrusted) throw new Error(`${spec.key}: not mounting at ${spec.mountPoint}: ${untrusted}`);
    mkdirSync(spec.mountPoint, { recursive: true });
    if (spec.cacheDirectory) prepareCacheDirectory(spec.cacheDirectory);
    if (entry.stopped.signal.aborted) throw new Error(`${spec.key} was stopped before it started`);
    const before = topMount(spec.mountPoint);
    const isNew = (m: MountEntry | undefined): m is MountEntry => !!m && !(before && sameMount(m, before));
    const child = spawn(this.mountS3, ['--foreground', ...spec.args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...this.baseEnv, ...spec.environment },
    });
    entry.child = child;
    this.keepFromOomKiller(spec.key, child);
    entry.stderr = '';
    child.stderr!.on('data', (d: Buffer) => (entry.stderr = (entry.stderr + d.toString()).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let ready = false;
    child.once('exit', (code, signal) => {
      this.onEvent({ type: 'exited', key: spec.key, code, signal, stderr: entry.stderr.trim() });
      // A process that never became ready is launch()'s failure to report, not a crash to restart.
      if (ready && !entry.stopped.signal.aborted && entry.child === child) {
        if (this.clock.now() - (entry.readyAt ?? 0) >= STABLE_RUN_MS) entry.attempt = 0;
        entry.restarting = this.restartLater(entry);
      }
    });
    const mounted = await this.untilMounted(entry, child, isNew, exited);
    ready = true;
    entry.mount = mounted;
    entry.readyAt = this.clock.now();
    this.onEvent({
      type: 'ready',
      key: spec.key,
      pid: child.pid!,
      mountId: mounted.id,
      restarts: entry.restarts,
    });
  }

  /** Gives the process the oom_score_adj a unit would (OOMScoreAdjust=); refused (not root): logged, not fatal. */
  private keepFromOomKiller(key: string, child: ChildProcess): void {
    if (child.pid === undefined) return; // spawn failed: its 'error' and 'exit' say why
    try {
      writeFileSync(`/proc/${child.pid}/oom_score_adj`, String(MOUNTPOINT_OOM_SCORE_ADJ));
    } catch (e) {
      this.onEvent({ type: 'oom-adjust-failed', key, error: (e as Error).message });
    }
  }

  /**
   * Waits until the process has mounted (a mount on the path that was not there before); one that exits
   * first fails, one that is stopped or past READY_TIMEOUT_MS is killed.
   */
  private async untilMounted(
    entry: Entry,
    child: ChildProcess,
    isNew: (m: MountEntry | undefined) => m is MountEntry,
    exited: Promise<void>,
  ): Promise<MountEntry> {
    const { spec } = entry;
    const { signal } = entry.stopped;
    const mountedNow = async (): Promise<PollResult<MountEntry>> => {
      const mounted = topMount(spec.mountPoint);
      if (isNew(mounted)) return { value: mounted };
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${this.mountS3} for ${spec.mountPoint} exited (${child.exitCode ?? child.signalCode}): ${entry.stderr.trim()}`,
        );
      }
      return { state: 'not mounted yet' };
    };
    // A fixed 50 ms between looks at mountinfo (`random: () => 1`: no jitter).
    const poll = {
      clock: this.clock,
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      initialPollMs: 50,
      maxPollMs: 50,
      random: () => 1,
    };
    try {
      return await pollUntil(mountedNow, poll);
    } catch (err) {
      const stopped = signal.aborted && err === signal.reason;
      if (!stopped && !(err instanceof PollTimeout)) throw err;
      child.kill('SIGKILL');
      await exited;
      // Killed just after it mounted: remember the mount so stop() detaches it.
      const left = topMount(spec.mountPoint);
      if (isNew(left)) entry.mount = left;
      throw new Error(
        stopped
          ? `${this.mountS3} for ${spec.mountPoint} was stopped before it was mounted`
          : `${this.mountS3} for ${spec.mountPoint} was not mounted within ${READY_TIMEOUT_MS} ms`,
        { cause: err },
      );
    }
  }

  /**
   * Lazily unmounts the mount this entry's process made, when it is still the top mount on the path.
   * Anything else there (another agent's mount, an operator's) is left alone.
   */
  private async detachOwnMount(entry: Entry): Promise<void> {
    const ours = entry.mount;
    if (!ours) return;
    const top = topMount(entry.spec.mountPoint);
    if (top && sameMount(top, ours)) await this.run('umount', ['-l', entry.spec.mountPoint]);
    entry.mount = undefined;
  }

  private async restartLater(entry: Entry): Promise<void> {
    const { signal } = entry.stopped;
    while (!signal.aborted) {
      const inMs = backoffDelay(Math.min(entry.attempt, 10), RESTART_INITIAL_MS, RESTART_MAX_MS);
      this.onEvent({ type: 'restart-scheduled', key: entry.spec.key, inMs });
      await this.clock.sleep(inMs, signal);
      if (signal.aborted) return;
      entry.restarts++;
      entry.attempt++;
      try {
        await this.launch(entry);
        return;
      } catch (e) {
        if (!signal.aborted)
          this.onEvent({ type: 'restart-failed', key: entry.spec.key, error: (e as Error).message });
      }
    }
  }

  /** Ends every pending start and restart at once; processes already mounted run until stop(). */
  cancel(): void {
    for (const entry of this.entries.values()) entry.stopped.abort();
  }

  /** Cancels any pending restart, SIGTERM (SIGKILL after STOP_TIMEOUT_MS), then detaches our mount if left. */
  async stop(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.stopped.abort();
    const child = entry.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(killer);
    }
    await entry.restarting;
    await this.detachOwnMount(entry).catch((e: Error) =>
      this.onEvent({ type: 'detach-failed', key, error: e.message }),
    );
    this.entries.delete(key);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((k) => this.stop(k)));
  }
}
