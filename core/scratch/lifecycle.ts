/**
 * `mountfleet scratch run`: create → wait → mount target → mount → run CMD → always tear down.
 *
 * One run, one file system: the run creates a file system of its own (its CreationToken names the run, see
 * core/contract/naming.ts) and no other run ever mounts, adopts or deletes it. Whatever happens after the first AWS call —
 * CMD fails, SIGINT/SIGTERM, a Spot interruption notice or Auto Scaling terminating the instance, an AWS
 * error, a mount failure — the run ends in teardown: unmount (lazily if still busy), then delete the mount
 * target, wait until none remain, delete the file system. Teardown touches only what this run made: its file
 * system, its mount, the directories it created. If the runner itself is killed, a watcher stops the job and
 * unmounts (runner-watch.ts) and the reaper deletes the file system. If teardown cannot finish in its time
 * bound, the run says so and fails; the file system keeps its tags and the reaper deletes it later.
 */
import { mkdirSync } from 'node:fs';
import type { EFSClient } from '@aws-sdk/client-efs';
import { EXIT_STATUS, systemClock, type Clock } from '../common';
import {
  CreateOutcomeUnknown,
  provisionRunFileSystem,
  RunInterrupted,
  RunSetupError,
  type WaitOptions,
} from '../efs';
import { holdCheckedDirectory, type CheckedDirectory } from '../system';
import {
  describeTermination,
  TERMINATION_POLL_MS,
  watchForTermination,
  type TerminationNotice,
} from '../instance';
import {
  INITIAL_CREDIT_BYTES,
  startCreditGuard,
  type CreditGuardOptions,
  type CreditReport,
  mountStatsReader,
} from '../credit';
import { signalNumber, startJob, systemdScopeFor, type JobExit, type JobScope } from './job';
import { isMounted, mountFileSystem, topMountAt } from './mount';
import { generateRunId } from '../contract';
import { watchRunner, type RunnerWatch } from './runner-watch';

import { stopProcessGroup, superviseJob, type StopReason } from './job-supervision';
import {
  reportTeardown,
  tearDown,
  teardownBudgetMs,
  type RunResources,
  type TeardownResult,
} from './teardown';

type Phase = 'creating' | 'waiting' | 'mount-target' | 'mounting' | 'running' | 'tearing-down';

/** A progress line that starts a phase: `[creating] …`, the lines tests and operators wait for. */
function phase(log: (line: string) => void, p: Phase, message: string): void {
  log(`[${p}] ${message}`);
}

/** What the run needs from IMDS. */
export interface InstancePlacement {
  readonly instanceId: string;
  readonly availabilityZone: string;
  readonly availabilityZoneId: string;
}

/** Termination notices must be seen within this long: AWS gives two minutes' warning of a Spot interruption. */
export const MAX_SPOT_POLL_MS = TERMINATION_POLL_MS;

/**
 * What runScratchJob needs: a plan's settings (run-plan.ts; run.ts passes them on), or the same fields from an
 * in-process caller (tests, benches), and the client, clock and log it runs with.
 */
export interface ScratchJobRequest {
  readonly efs: EFSClient;
  readonly placement: InstancePlacement;
  readonly fleetId: string;
  readonly jobId: string;
  /** This run's id: its CreationToken and `mountfleet:run` tag. @default a new one (core/contract's generateRunId) */
  readonly runId?: string;
  /** Where to mount: a resolved path that is no mount point (the plan's, prepared by local-setup.ts). */
  readonly path: string;
  /** The outermost directory the caller created for the path: teardown removes it again. */
  readonly createdDirectory?: string;
  /**
   * The path as the plan checked it (local-setup.ts): asked again right before the mount, which fails when
   * the path changed meanwhile. An in-process caller without a plan leaves it out: the path is then created
   * and checked right before the mount.
   */
  readonly checkedPath?: CheckedDirectory;
  /** Descriptors of the run's locks: the runner watcher holds them while it cleans up after a dead runner. */
  readonly lockFds?: readonly number[];
  readonly subnetId: string;
  readonly securityGroupId: string;
  readonly kmsKeyId?: string;
  /** Seconds CMD gets after SIGTERM before it is killed and the mount detached. */
  readonly teardownGraceSeconds: number;
  readonly command: string;
  readonly args: readonly string[];
  /** Program that mounts EFS, called like `mount.efs FS_ID:/ DIR -o OPTIONS`; `mount -t efs` when unset. */
  readonly mountHelper?: string;
  /** Environment for CMD (MOUNTFLEET_SCRATCH and MOUNTFLEET_JOB are added). */
  readonly env?: NodeJS.ProcessEnv;
  /** Reads the Spot notice and the Auto Scaling termination (core/instance/termination-notice.ts); never polled when unset. */
  readonly readTerminationNotice?: () => Promise<TerminationNotice | undefined>;
  /** @default 5000 (and never more) */
  readonly terminationPollMs?: number;
  /** Fires with SIGINT or SIGTERM as its reason when the user (or the system) asks the run to stop. */
  readonly stopSignal?: AbortSignal;
  readonly clock?: Clock;
  /** Progress lines for humans (stderr). */
  readonly log?: (line: string) => void;
  /** Bounds and poll intervals of the waits (tests shorten them). */
  readonly waits?: Omit<WaitOptions, 'clock' | 'signal' | 'onProgress'>;
  /** Longest teardown (mount-target deletion wait included). @default 180000 */
  readonly teardownTimeoutMs?: number;
  /** Teardown gives up once AWS has not answered at all for this long. @default 30000 */
  readonly unreachableTimeoutMs?: number;
  /** Watch the burst credit while CMD runs (core/credit/guard.ts); not watched when unset. */
  readonly creditGuard?: CreditGuardRequest;
}

/** The guard's settings; the run supplies the file system, its EFS client, the clock, the log and the stop. */
export type CreditGuardRequest = Omit<
  CreditGuardOptions,
  'efs' | 'fileSystemId' | 'initialCreditBytes' | 'stopJob' | 'clock' | 'log'
>;

interface ScratchJobResult {
  /** The status mountfleet should exit with. */
  readonly exitStatus: number;
  /** CMD's own exit, when it ran. */
  readonly job?: JobExit;
  readonly stoppedBy?: StopReason;
  /** Why setup failed, when it did (CMD did not run then). */
  readonly setupError?: string;
  readonly runId: string;
  readonly fileSystemId?: string;
  readonly teardown: TeardownResult;
  /** What the burst-credit guard measured while CMD ran. */
  readonly credit?: CreditReport;
}

/** For an AWS error, how hard the SDK tried: ` (after 10 attempts, 12.3 s of retry delays)`; '' otherwise. */
function retriesOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause ?? err;
  const meta = (cause as { $metadata?: { attempts?: number; totalRetryDelay?: number } }).$metadata;
  if (meta?.attempts === undefined) return '';
  return ` (after ${meta.attempts} attempt(s), ${((meta.totalRetryDelay ?? 0) / 1000).toFixed(1)} s of retry delays)`;
}

export async function runScratchJob(request: ScratchJobRequest): Promise<ScratchJobResult> {
  const clock = request.clock ?? systemClock;
  const log = request.log ?? (() => undefined);
  const runId = request.runId ?? generateRunId(clock.now());
  const stops = watchForStops(request, clock, log);
  const waitOptions: WaitOptions = {
    ...request.waits,
    clock,
    signal: stops.signal,
    onProgress: (m) => log(m),
  };
  // What this run made, and therefore what teardown may undo.
  const made: RunResources = {
    createOutcomeUnknown: false,
    firstCreatedDirectory: request.createdDirectory,
  };
  let job: JobExit | undefined;
  let credit: CreditReport | undefined;
  let setupError: string | undefined;
  // Stands in for this process if it dies from the job's start to the end of teardown (runner-watch.ts).
  let watch: RunnerWatch | undefined;
  try {
    const mountTargetIp = await provision(request, runId, made, waitOptions, log);
    if (stops.signal.aborted) throw new RunInterrupted();
    await mountScratch(request, made, mountTargetIp, stops.signal, log);
    if (stops.signal.aborted) throw new RunInterrupted();
    const scope = systemdScopeFor(request.fleetId, request.jobId);
    watch = watchRunner({
      scope,
      graceSeconds: request.teardownGraceSeconds,
      mount: made.mount,
      lockFds: request.lockFds ?? [],
      jobId: request.jobId,
    });
    ({ job, credit } = await runJob(request, made, { watch, scope }, stops, clock, log));
  } catch (err) {
    if (err instanceof CreateOutcomeUnknown) made.createOutcomeUnknown = true;
    // A call or helper cut off by the stop request is the interruption itself, not a setup failure.
    if (!(err instanceof RunInterrupted) && !stops.signal.aborted) {
      setupError = `${(err as Error).message}${retriesOf(err)}`;
      log(`setup failed: ${setupError}`);
    }
  }
  const terminationNotice = await stops.finish();

  const stoppedBy = stops.signal.aborted ? (stops.signal.reason as StopReason) : undefined;
  const { fileSystemId } = made;
  phase(
    log,
    'tearing-down',
    `${fileSystemId ? `${fileSystemId} of job ${request.jobId}` : `job ${request.jobId}`}`,
  );
  const teardownTimeoutMs = teardownBudgetMs(request.teardownTimeoutMs ?? 180_000, terminationNotice, clock);
  let teardown: TeardownResult;
  try {
    teardown = await tearDown({ ...request, runId }, made, teardownTimeoutMs, clock, log);
  } finally {
    // The run is over only now: until here a dead runner's mount is still the watcher's to take down.
    watch?.release();
  }
  reportTeardown(teardown, { ...request, runId }, log);

  return {
    exitStatus: exitStatusOf(job, stoppedBy, setupError, teardown),
    job,
    stoppedBy,
    setupError,
    runId,
    fileSystemId: fileSystemId ?? (teardown.status !== 'nothing-created' ? teardown.fileSystemId : undefined),
    teardown,
    credit,
  };
}

/** One "stop" for the whole run: the caller's signal or a termination notice, whichever comes first. */
function watchForStops(request: ScratchJobRequest, clock: Clock, log: (line: string) => void) {
  const stop = new AbortController();
  const onExternalStop = () => stop.abort(request.stopSignal?.reason as StopReason);
  if (request.stopSignal?.aborted) onExternalStop();
  request.stopSignal?.addEventListener('abort', onExternalStop, { once: true });
  let notice: TerminationNotice | undefined;
  const watching = new AbortController();
  const watcher = request.readTerminationNotice
    ? watchForTermination(request.readTerminationNotice, {
        clock,
        pollMs: Math.min(request.terminationPollMs ?? MAX_SPOT_POLL_MS, MAX_SPOT_POLL_MS),
        signal: AbortSignal.any([watching.signal, stop.signal]),
        log,
      }).then((seen) => {
        if (seen && !stop.signal.aborted) {
          notice = seen;
          log(`${describeTermination(seen)}; stopping the job`);
          stop.abort(seen.source satisfies StopReason);
        }
      })
    : Promise.resolve();
  return {
    signal: stop.signal,
    /** Stops the run for a reason of its own (the credit guard's `stop`), through the same path as a signal. */
    stop: (reason: StopReason) => stop.abort(reason),
    /** The termination notice that stopped the run, if one did so far. */
    notice: () => notice,
    /** Stops watching; resolves with the termination notice that stopped the run, if one did. */
    async finish(): Promise<TerminationNotice | undefined> {
      watching.abort();
      request.stopSignal?.removeEventListener('abort', onExternalStop);
      await watcher;
      return notice;
    },
  };
}

/** Creates the run's file system and mount target and waits until both are usable; returns the target's IP. */
async function provision(
  request: ScratchJobRequest,
  runId: string,
  made: RunResources,
  waitOptions: WaitOptions,
  log: (line: string) => void,
): Promise<string> {
  const { placement } = request;
  phase(
    log,
    'creating',
    `file system for job ${request.jobId} (run ${runId}) of fleet ${request.fleetId} in ${placement.availabilityZone} (${placement.availabilityZoneId})`,
  );
  const { mountTarget } = await provisionRunFileSystem(
    request.efs,
    {
      fleetId: request.fleetId,
      jobId: request.jobId,
      runId,
      ownerInstanceId: placement.instanceId,
      availabilityZoneName: placement.availabilityZone,
      subnetId: request.subnetId,
      securityGroupId: request.securityGroupId,
      kmsKeyId: request.kmsKeyId,
    },
    {
      ...waitOptions,
      onStep: (s) => {
        if (s.step === 'created') {
          made.fileSystemId = s.fileSystem.FileSystemId!;
          log(`created file system ${made.fileSystemId}`);
          phase(log, 'waiting', `for ${made.fileSystemId} to become available`);
        } else if (s.step === 'available') {
          log(`${s.fileSystemId} is available`);
        } else if (s.step === 'mount-target') {
          phase(log, 'mount-target', `in ${request.subnetId} with security group ${request.securityGroupId}`);
        } else if (s.step === 'mount-target-ready') {
          log(
            `${s.reused ? 'found' : 'created'} mount target ${s.mountTarget.MountTargetId} at ${s.mountTarget.IpAddress}`,
          );
        }
      },
    },
  );
  return mountTarget.IpAddress;
}

async function mountScratch(
  request: ScratchJobRequest,
  made: RunResources,
  mountTargetIp: string,
  stop: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  const fileSystemId = made.fileSystemId!;
  phase(log, 'mounting', `${fileSystemId} at ${request.path} (tls, mounttargetip=${mountTargetIp})`);
  if (isMounted(request.path)) {
    throw new Error(
      `${request.path} is already a mount point: unmount it (umount -l ${request.path}) or pass another --path`,
    );
  }
  // The caller normally created and checked the path before any AWS call (local-setup.ts); a library caller
  // may not have.
  made.firstCreatedDirectory ??= mkdirSync(request.path, { recursive: true });
  const checked = request.checkedPath ?? holdCheckedDirectory(request.path);
  const changed = checked.changed();
  if (checked !== request.checkedPath) checked.release();
  if (changed !== undefined) {
    throw new RunSetupError(
      `--path ${request.path} changed after it was checked: ${changed}; nothing was mounted`,
    );
  }
  try {
    await mountFileSystem({
      fileSystemId,
      path: request.path,
      mountTargetIp,
      helper: request.mountHelper,
      signal: stop,
    });
  } finally {
    // The path was no mount point a moment ago and the caller holds its lock, so the mount on top now,
    // even after a helper that failed half-way or was killed, is ours: teardown unmounts that one only.
    made.mount = topMountAt(request.path);
  }
}

type Stops = ReturnType<typeof watchForStops>;

/**
 * Runs CMD on the mounted scratch, passes stops on, and stops whatever it leaves behind; a watcher stands
 * in for this process if it dies meanwhile (runner-watch.ts), and the credit guard watches the file system
 * meanwhile when asked to (`--on-credit-low stop` ends the job through the same stop).
 */
async function runJob(
  request: ScratchJobRequest,
  made: RunResources,
  { watch, scope }: { watch: RunnerWatch; scope: JobScope | undefined },
  stops: Stops,
  clock: Clock,
  log: (line: string) => void,
): Promise<{ job: JobExit; credit?: CreditReport }> {
  const stop = stops.signal;
  phase(log, 'running', `${[request.command, ...request.args].join(' ')}`);
  // The job is held at its gate until the watcher knows it: CMD never runs unwatched.
  const running = startJob(request.command, request.args, {
    env: {
      ...(request.env ?? process.env),
      MOUNTFLEET_SCRATCH: request.path,
      MOUNTFLEET_JOB: request.jobId,
    },
    scope,
  });
  if (running.pid !== undefined) watch.arm(running.pid, () => running.openGate());
  const guard =
    request.creditGuard &&
    startCreditGuard({
      readCounters: mountStatsReader(request.path),
      ...request.creditGuard,
      efs: request.efs,
      fileSystemId: made.fileSystemId!,
      initialCreditBytes: INITIAL_CREDIT_BYTES, // every run's file system is new: full credit
      stopJob: () => stops.stop('credit-low'),
      clock,
      log,
    });
  let job: JobExit;
  let credit: CreditReport | undefined;
  try {
    job = await superviseJob(running, stop, request.teardownGraceSeconds, clock, log);
    if (job.startError) log(job.startError);
    log(`job exited with status ${job.status}${job.signal ? ` (${job.signal})` : ''}`);
    await stopProcessGroup(running, stop, request.teardownGraceSeconds, clock, log);
    // Its process group may now be reused by anyone: the watcher must not signal it any more.
    if (running.remaining().length === 0) watch.jobGone();
  } finally {
    // An instance going away needs every second for teardown: no last read of CloudWatch then.
    credit = await guard?.stop({ lastRead: stops.notice() === undefined });
  }
  return { job, credit };
}

function exitStatusOf(
  job: JobExit | undefined,
  stoppedBy: StopReason | undefined,
  setupError: string | undefined,
  teardown: TeardownResult,
): number {
  const teardownFailed = teardown.status === 'incomplete';
  if (job !== undefined) return job.status !== 0 ? job.status : teardownFailed ? EXIT_STATUS.failure : 0;
  if (setupError !== undefined) return EXIT_STATUS.failure;
  if (stoppedBy !== undefined)
    return 128 + signalNumber(stoppedBy === 'SIGINT' || stoppedBy === 'SIGTERM' ? stoppedBy : 'SIGTERM');
  return teardownFailed ? EXIT_STATUS.failure : 0;
}
