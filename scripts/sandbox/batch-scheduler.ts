/**
 * STAND-IN for AWS Batch's scheduler and its job states. The pinned moto (5.2.5) runs Batch jobs in Docker,
 * which this machine lacks; its Docker-less mode (`batch_simple`, chosen with `POST /moto-api/config`
 * `{"batch":{"use_docker":false}}`) keeps every job record Batch would (queue, job definition, command
 * overrides, tags) but marks each job SUCCEEDED inside SubmitJob itself: no state in between, no failure but
 * for all jobs at once (MOTO_SIMPLE_BATCH_FAIL_AFTER), CancelJob a no-op, no container, no events.
 *
 * So the sandbox keeps the states itself and shows them to every Batch client through a proxy in front of
 * moto (test/support/fault-proxy.ts; AWS_ENDPOINT_URL_BATCH points there): SubmitJob is recorded (SUBMITTED,
 * then PENDING and RUNNABLE: no dependencies), the section places a job on a played instance (STARTING,
 * RUNNING) and ends it (SUCCEEDED, or FAILED with Batch's statusReason); CancelJob fails a job that has not
 * started, TerminateJob one that has; DescribeJobs answers carry these states, attempts and exit codes.
 * ListJobs is not stood in (moto filters it by its own states).
 */
import { randomUUID } from 'node:crypto';
import { FaultProxy, type RequestInfo } from '../../test/support/fault-proxy';

export type BatchJobStatus =
  'SUBMITTED' | 'PENDING' | 'RUNNABLE' | 'STARTING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

/** One job as the stand-in schedules it. */
export interface ScheduledJob {
  readonly jobId: string;
  readonly jobName: string;
  status: BatchJobStatus;
  /** The states it went through, in order. */
  readonly history: BatchJobStatus[];
  statusReason?: string;
  /** The container's exit code, when it exited by itself. */
  exitCode?: number;
  /** The played instance it was placed on. */
  instanceId?: string;
  startedAt?: number;
  stoppedAt?: number;
}

/** How a job ended, as Batch reports it. */
export type JobEnding =
  { readonly exitCode: number } | { readonly statusReason: string; readonly exitCode?: number };

type Listener = (job: ScheduledJob, reason: string) => void;

const FINAL: readonly BatchJobStatus[] = ['SUCCEEDED', 'FAILED'];
const BEFORE_STARTING: readonly BatchJobStatus[] = ['SUBMITTED', 'PENDING', 'RUNNABLE'];

/** Batch's statusReason for a container that exited by itself, success or not. */
export const CONTAINER_EXITED = 'Essential container in task exited';

/** Batch's statusReason when the instance under a running job goes away (a Spot reclaim among others). */
export function hostTerminatedReason(instanceId: string): string {
  return `Host EC2 (instance ${instanceId}) terminated.`;
}

/** Turns moto's Docker-less Batch on (server-wide; the sandbox's emulator is its own). */
export async function useBatchWithoutDocker(motoEndpoint: string): Promise<void> {
  const res = await fetch(`${motoEndpoint}/moto-api/config`, {
    method: 'POST',
    body: JSON.stringify({ batch: { use_docker: false } }),
  });
  if (!res.ok) throw new Error(`moto-api/config answered ${res.status}: ${await res.text()}`);
}

export class BatchSchedulerStandIn {
  readonly jobs = new Map<string, ScheduledJob>();
  private readonly waiters: (() => void)[] = [];
  private readonly terminateListeners: Listener[] = [];

  private constructor(private readonly proxy: FaultProxy) {}

  /** Starts the proxy in front of moto with the stand-in's rules; point AWS_ENDPOINT_URL_BATCH at `endpoint`. */
  static async start(motoEndpoint: string): Promise<BatchSchedulerStandIn> {
    await useBatchWithoutDocker(motoEndpoint);
    const proxy = await FaultProxy.start({ target: motoEndpoint });
    const s = new BatchSchedulerStandIn(proxy);
    const on = (path: string, rewrite: (body: string, request: RequestInfo) => string) =>
      proxy.addRule({ service: 'batch', match: (r) => r.path === path, fault: { kind: 'rewrite', rewrite } });
    on('/v1/submitjob', (body) => s.submitted(body));
    on('/v1/describejobs', (body) => s.describe(body));
    on('/v1/canceljob', (body, request) => s.cancel(request, body, false));
    on('/v1/terminatejob', (body, request) => s.cancel(request, body, true));
    return s;
  }

  get endpoint(): string {
    return this.proxy.endpoint;
  }

  /** Called with a RUNNING job that TerminateJob ends: stop its container. */
  onTerminate(listener: Listener): void {
    this.terminateListeners.push(listener);
  }

  /** Waits until the job is SUCCEEDED or FAILED. */
  async waitForEnd(jobId: string, timeoutMs = 120_000): Promise<ScheduledJob> {
    return this.waitFor(
      `job ${jobId} to end`,
      () => {
        const j = this.jobs.get(jobId);
        return j && FINAL.includes(j.status) ? j : undefined;
      },
      timeoutMs,
    );
  }

  /** The job goes onto a played instance: STARTING, then RUNNING once its container is up. */
  place(jobId: string, instanceId: string): ScheduledJob {
    const job = this.known(jobId);
    if (job.status !== 'RUNNABLE')
      throw new Error(`job ${jobId} is ${job.status}, not RUNNABLE: cannot place it`);
    job.instanceId = instanceId;
    this.move(job, 'STARTING');
    return job;
  }

  running(jobId: string): void {
    const job = this.known(jobId);
    if (job.status !== 'STARTING') return; // terminated meanwhile
    job.startedAt = Date.now();
    this.move(job, 'RUNNING');
  }

  /** Ends a started job the way Batch reports it; a job that already ended keeps its first ending. */
  end(jobId: string, ending: JobEnding): void {
    const job = this.known(jobId);
    if (FINAL.includes(job.status)) return;
    job.exitCode = ending.exitCode;
    job.statusReason = 'statusReason' in ending ? ending.statusReason : CONTAINER_EXITED;
    job.stoppedAt = Date.now();
    this.move(job, ending.exitCode === 0 && !('statusReason' in ending) ? 'SUCCEEDED' : 'FAILED');
  }

  async stop(): Promise<void> {
    await this.proxy.stop();
  }

  private known(jobId: string): ScheduledJob {
    const job = this.jobs.get(jobId);
    if (!job) throw new Error(`job ${jobId} was not submitted through the Batch stand-in`);
    return job;
  }

  private move(job: ScheduledJob, status: BatchJobStatus): void {
    job.status = status;
    job.history.push(status);
    for (const wake of this.waiters.splice(0)) wake();
  }

  private async waitFor<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`Batch stand-in: timed out waiting for ${what}`);
      // Woken by the next state change; the timer only bounds the wait.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** SubmitJob's answer names the job: it is SUBMITTED, then (no dependencies) PENDING and RUNNABLE. */
  private submitted(body: string): string {
    const out = JSON.parse(body) as { jobId?: string; jobName?: string };
    if (out.jobId) {
      const job: ScheduledJob = {
        jobId: out.jobId,
        jobName: out.jobName ?? '',
        status: 'SUBMITTED',
        history: [],
      };
      this.jobs.set(job.jobId, job);
      this.move(job, 'SUBMITTED');
      this.move(job, 'PENDING');
      this.move(job, 'RUNNABLE');
    }
    return body;
  }

  /** DescribeJobs: the stand-in's state, reason, times, attempts and exit code over moto's "SUCCEEDED". */
  private describe(body: string): string {
    const out = JSON.parse(body) as { jobs?: Record<string, unknown>[] };
    for (const detail of out.jobs ?? []) {
      const job = this.jobs.get(String(detail.jobId));
      if (job) Object.assign(detail, jobDetail(job, detail));
    }
    return JSON.stringify(out);
  }

  /** CancelJob fails a job that has not started; TerminateJob also stops a started one. */
  private cancel(request: RequestInfo, body: string, terminate: boolean): string {
    const { jobId, reason } = JSON.parse(request.body ?? '{}') as { jobId?: string; reason?: string };
    const job = jobId === undefined ? undefined : this.jobs.get(jobId);
    if (!job || FINAL.includes(job.status)) return body;
    if (BEFORE_STARTING.includes(job.status)) {
      job.statusReason = reason;
      job.stoppedAt = Date.now();
      this.move(job, 'FAILED');
    } else if (terminate) {
      for (const listener of this.terminateListeners) listener(job, reason ?? 'Terminated');
    }
    return body;
  }
}

/** The fields of a JobDetail the stand-in owns (the rest is moto's record of the job). */
function jobDetail(job: ScheduledJob, moto: Record<string, unknown>): Record<string, unknown> {
  const container = { ...((moto.container as Record<string, unknown> | undefined) ?? {}) };
  delete container.exitCode;
  const started = job.startedAt !== undefined;
  const attempt = started
    ? [
        {
          container: {
            containerInstanceArn: `arn:aws:ecs:sandbox:container-instance/${job.instanceId}`,
            taskArn: `arn:aws:ecs:sandbox:task/${randomUUIDFor(job)}`,
            ...(job.exitCode === undefined ? {} : { exitCode: job.exitCode }),
          },
          startedAt: job.startedAt,
          ...(job.stoppedAt === undefined
            ? {}
            : { stoppedAt: job.stoppedAt, statusReason: job.statusReason }),
        },
      ]
    : [];
  return {
    status: job.status,
    statusReason: job.statusReason,
    startedAt: job.startedAt,
    stoppedAt: job.stoppedAt,
    attempts: started && job.stoppedAt !== undefined ? attempt : [],
    container: { ...container, ...(job.exitCode === undefined ? {} : { exitCode: job.exitCode }) },
  };
}

const taskIds = new WeakMap<ScheduledJob, string>();
function randomUUIDFor(job: ScheduledJob): string {
  let id = taskIds.get(job);
  if (!id) taskIds.set(job, (id = randomUUID()));
  return id;
}
