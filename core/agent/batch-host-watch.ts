/**
 * What the agent does on a Batch host (agent.json `containers`) on every sweep: looks at each mount (mount-health.ts),
 * keeps the ready file and the job starter in step with it (mounts-ready.ts), and ends the job containers left on a
 * stale bind (container-guard.ts). Sweeps run one at a time; one asked for during a sweep runs right after it.
 */
import type { CommandRunner } from './command-runner';
import { ContainerGuard } from './container-guard';
import type { EventLog } from './event-log';
import { MountHealth, type WatchedMount } from './mount-health';
import { MountsReady } from './mounts-ready';

export interface BatchHostSnapshot {
  readonly mounts: readonly WatchedMount[];
  /** The Express zone is declared down. */
  readonly zoneDown: boolean;
  /** A switch of a user path is under way: no job may start meanwhile. */
  readonly switching: boolean;
}

export class BatchHostWatch {
  readonly ready: MountsReady;
  private readonly health: MountHealth;
  private readonly guard: ContainerGuard;
  private sweeping?: Promise<void>;
  private again = false;
  private isStopping = false;

  constructor(
    private readonly o: {
      readonly runDir: string;
      readonly taskCgroup: string;
      /** Set under systemd only. */
      readonly jobStarterUnit?: string;
      readonly instanceId: string;
      readonly run: CommandRunner;
      readonly log: EventLog;
      readonly snapshot: () => BatchHostSnapshot;
      /** Called when the ready file comes or goes, and when containers were ended (the state file shows both). */
      readonly changed: () => void;
    },
  ) {
    this.ready = new MountsReady(o);
    this.health = new MountHealth(o.log);
    this.guard = new ContainerGuard(o);
  }

  /** Job containers ended so far. */
  get ended(): number {
    return this.guard.ended;
  }

  /** Runs a sweep now, or right after the one under way. */
  sweep(): Promise<void> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      do {
        this.again = false;
        await this.sweepOnce().catch((e: Error) => this.o.log({ event: 'sweep-failed', error: e.message }));
      } while (this.again);
    })().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /**
   * The agent is stopping: the ready file goes (and the job starter stops) before any mount does, for good, and the
   * jobs on the mounts are ended now, with the reason, rather than left to find them gone.
   */
  async stopping(): Promise<void> {
    this.isStopping = true;
    await this.sweeping;
    await this.ready.leave('the agent is stopping');
    this.health.stopped();
    await this.sweep();
  }

  /** The agent has stopped every process: a job started meanwhile is ended too. */
  async stopped(): Promise<void> {
    await this.sweep();
  }

  private async sweepOnce(): Promise<void> {
    const snapshot = this.o.snapshot();
    const report = await this.health.check(snapshot.mounts, snapshot.zoneDown);
    const notReady = this.isStopping
      ? 'the agent is stopping'
      : snapshot.switching
        ? 'a user path is being switched'
        : report.notReady;
    // Leave first, then end what is stale: a job must not start on a mount the sweep just found dead.
    if (notReady) await this.ready.leave(notReady);
    if (this.guard.sweep(report.fleet).length > 0) this.o.changed();
    if (!notReady && !this.o.snapshot().switching) await this.ready.enter();
  }
}
