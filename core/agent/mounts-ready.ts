/**
 * A Batch host's ready file (MOUNTS_READY_FILE in the run directory, holding the agent's pid), which the ECS agent's
 * start gate waits for, and the job-starter unit (the ECS agent) that follows it under systemd.
 *
 * A job container's binds of the fleet paths are taken once, at its start, so a job must start only while every
 * mount is live: the file is there only then. Leaving ready also stops the job starter, `systemctl stop --no-block`:
 * a stopped ECS agent takes no new task (its instance shows disconnected, and ECS places tasks only on instances
 * whose agent is connected), while the job containers already running keep running, as Docker, not the ECS agent,
 * runs them; the container guard ends those on a stale bind. Coming back starts it again. `--no-block`: the agent's
 * sweep must not wait out the ECS agent's stop timeout, nor its start gate (ExecStartPre), which waits for this file.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MOUNTS_READY_FILE } from '../contract';
import type { CommandRunner } from './command-runner';
import type { EventLog } from './event-log';

export class MountsReady {
  /** undefined until the first decision: the file (and unit) left by an earlier agent are not trusted. */
  private ready?: boolean;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: {
      readonly runDir: string;
      /** Under systemd, the unit that starts jobs (agent.json containers.jobStarterUnit); none under --supervise. */
      readonly jobStarterUnit?: string;
      readonly run: CommandRunner;
      readonly log: EventLog;
      /** Called once the file is written or removed (the state file shows it). */
      readonly changed?: () => void;
    },
  ) {
    // An earlier agent's file names a pid that may be reused: nobody starts jobs on it until this agent says so.
    rmSync(this.file, { force: true });
  }

  get file(): string {
    return join(this.o.runDir, MOUNTS_READY_FILE);
  }

  get isReady(): boolean {
    return this.ready === true;
  }

  /** Every mount is live: writes the file (whole, then renamed) and starts the job starter. */
  async enter(): Promise<void> {
    if (this.ready === true) return;
    this.ready = true;
    writeFileSync(`${this.file}.tmp`, `${process.pid}\n`);
    renameSync(`${this.file}.tmp`, this.file);
    this.o.log({ event: 'mounts-ready', file: this.file });
    this.o.changed?.();
    await this.jobStarter('start');
  }

  /** A mount is not live, or a switch is about to start: removes the file and stops the job starter. */
  async leave(reason: string): Promise<void> {
    if (this.ready === false) return;
    this.ready = false;
    rmSync(this.file, { force: true });
    this.o.log({ event: 'mounts-not-ready', reason, file: this.file });
    this.o.changed?.();
    await this.jobStarter('stop');
  }

  /** One systemctl at a time, in the order decided: a start must not overtake the stop that came before it. */
  private jobStarter(action: 'start' | 'stop'): Promise<void> {
    const unit = this.o.jobStarterUnit;
    if (!unit) return Promise.resolve();
    this.queue = this.queue.then(async () => {
      try {
        await this.o.run('systemctl', [action, '--no-block', unit]);
        this.o.log({ event: action === 'start' ? 'job-starter-started' : 'job-starter-stopped', unit });
      } catch (e) {
        this.o.log({ event: `job-starter-${action}-failed`, unit, error: (e as Error).message });
      }
    });
    return this.queue;
  }
}
