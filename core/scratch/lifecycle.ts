/**
 * `mountfleet scratch run`: create → wait → mount target → mount → run CMD → always tear down.
 *
 * Whatever happens after the first AWS call — CMD fails, SIGINT/SIGTERM, a Spot interruption notice or
 * Auto Scaling terminating the instance, an AWS error, a mount failure — the run ends in teardown: unmount (lazily if still busy), then delete the
 * mount target, wait until none remain, delete the file system. Teardown touches only what this run made
 * or adopted: the file system it created or reused (never one it refused), the mount it made, the
 * directories it created. It looks the file system up by its CreationToken only when the create call got
 * no clear answer, so an interrupted create cannot leak. If teardown
 * cannot finish in its time bound, the run says so and fails; the file system keeps its tags and the
 * reaper deletes it later.
 */
import { mkdirSync, rmdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EFSClient } from '@aws-sdk/client-efs';
import { backoffDelay, systemClock, type Clock } from '../clock';
import { markTeardownStarted, teardownFileSystem } from '../efs-teardown';
import { errorName, errorText } from '../errors';
import { tagValue } from '../fleet-file-systems';
import type { MountEntry } from '../mountinfo';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE } from '../tags';
import {
  describeTermination,
  TERMINATION_POLL_MS,
  watchForTermination,
  type TerminationNotice,
} from '../termination-watch';
import { signalNumber, startJob, type JobExit, type RunningJob } from './job';
import { isMounted, mountFileSystem, topMountAt, unmount } from './mount';
import { creationToken } from './naming';
import {
  CreateOutcomeUnknown,
  ensureFileSystem,
  ensureMountTarget,
  findFileSystemByToken,
  ScratchInterrupted,
  ScratchInUseError,
  waitForFileSystem,
  waitForMountTarget,
  type WaitOptions,
} from './provision';

export const PHASES = ['creating', 'waiting', 'mount-target', 'mounting', 'running', 'tearing-down'] as const;
export type Phase = (typeof PHASES)[number];

/** What the run needs from IMDS. */
export interface InstancePlacement {
  readonly instanceId: string;
  readonly availabilityZone: string;
  readonly availabilityZoneId: string;
}

/** Termination notices must be seen within this long: AWS gives two minutes' warning of a Spot interruption. */
export const MAX_SPOT_POLL_MS = TERMINATION_POLL_MS;
/** The job's grace period once the instance is going away, whatever the configured one. */
export const SPOT_GRACE_SECONDS = 10;

/** Why a run stopped early: a signal, a Spot notice, or Auto Scaling terminating the instance. */
export type StopReason = 'SIGINT' | 'SIGTERM' | TerminationNotice['source'];

const instanceGoingAway = (reason: StopReason) => reason === 'spot' || reason === 'auto-scaling';

export interface ScratchRunRequest {
  readonly efs: EFSClient;
  /** Tells whether the owner of a file system this run would reuse is still running. */
  readonly ec2: EC2Client;
  readonly placement: InstancePlacement;
  readonly fleetId: string;
  readonly jobId: string;
  readonly path: string;
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
  /** Reads the Spot notice and the Auto Scaling termination (core/termination-watch.ts); never polled when unset. */
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
}

export type TeardownResult =
  | {
      readonly status: 'deleted' | 'already-gone';
      readonly fileSystemId: string;
      readonly mountTargetsDeleted: number;
    }
  | { readonly status: 'nothing-created' }
  | {
      readonly status: 'incomplete';
      /** `unreachable`: no answer from AWS at all (refused, timed out); `not-deleted`: AWS answered with an error or the waits ran out. */
      readonly cause: 'unreachable' | 'not-deleted';
      readonly fileSystemId?: string;
      readonly reason: string;
    };

export interface ScratchRunResult {
  /** The status mountfleet should exit with. */
  readonly exitStatus: number;
  /** CMD's own exit, when it ran. */
  readonly job?: JobExit;
  readonly stoppedBy?: StopReason;
  /** Why setup failed, when it did (CMD did not run then). */
  readonly setupError?: string;
  readonly fileSystemId?: string;
  readonly reused: boolean;
  readonly teardown: TeardownResult;
}

/** Teardown stops retrying once AWS has not answered at all for this long (the reaper finishes the job). */
export const DEFAULT_UNREACHABLE_TIMEOUT_MS = 30_000;

/** True when the error is an answer from the service (an HTTP status), not a transport failure or timeout. */
function answeredByService(err: unknown): boolean {
  return (
    (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode !== undefined
  );
}

/** For an AWS error, how hard the SDK tried: ` (after 10 attempts, 12.3 s of retry delays)`; '' otherwise. */
function retriesOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause ?? err;
  const meta = (cause as { $metadata?: { attempts?: number; totalRetryDelay?: number } }).$metadata;
  if (meta?.attempts === undefined) return '';
  return ` (after ${meta.attempts} attempt(s), ${((meta.totalRetryDelay ?? 0) / 1000).toFixed(1)} s of retry delays)`;
}

/** A call abandoned by an AbortSignal.timeout (the SDK passes the abort on as an AbortError). */
function isTimeout(err: unknown): boolean {
  const name = errorName(err);
  return name === 'AbortError' || name === 'TimeoutError';
}

/** How long to wait for a SIGKILLed job to go before tearing down anyway. */
const KILL_WAIT_MS = 5000;

/** Exit status when setup or teardown failed and CMD's status says nothing about it. */
export const EXIT_SCRATCH_FAILED = 1;
/** Exit status when another run holds the job id or the path, or another instance owns the job's file system (EX_TEMPFAIL). */
export const EXIT_IN_USE = 75;

export async function runScratchJob(request: ScratchRunRequest): Promise<ScratchRunResult> {
  const clock = request.clock ?? systemClock;
  const log = request.log ?? (() => undefined);
  const phase = (p: Phase, message: string) => log(`[${p}] ${message}`);

  // One "stop" for the whole run: the caller's signal or a termination notice, whichever comes first.
  const stop = new AbortController();
  const onExternalStop = () => stop.abort(request.stopSignal?.reason as StopReason);
  if (request.stopSignal?.aborted) onExternalStop();
  request.stopSignal?.addEventListener('abort', onExternalStop, { once: true });
  let terminationNotice: TerminationNotice | undefined;
  const terminationWatch = new AbortController();
  const terminationWatcher = request.readTerminationNotice
    ? watchForTermination(request.readTerminationNotice, {
        clock,
        pollMs: Math.min(request.terminationPollMs ?? MAX_SPOT_POLL_MS, MAX_SPOT_POLL_MS),
        signal: AbortSignal.any([terminationWatch.signal, stop.signal]),
        log,
      }).then((notice) => {
        if (notice && !stop.signal.aborted) {
          terminationNotice = notice;
          log(`${describeTermination(notice)}; stopping the job`);
          stop.abort(notice.source satisfies StopReason);
        }
      })
    : Promise.resolve();

  const waitOptions: WaitOptions = {
    ...request.waits,
    clock,
    signal: stop.signal,
    onProgress: (m) => log(m),
  };
  // What this run made or adopted, and therefore what teardown may undo.
  const made: RunResources = { createOutcomeUnknown: false };
  let reused = false;
  let job: JobExit | undefined;
  let setupError: string | undefined;
  let inUse = false;

  try {
    phase(
      'creating',
      `file system for job ${request.jobId} of fleet ${request.fleetId} in ${request.placement.availabilityZone} (${request.placement.availabilityZoneId})`,
    );
    const ensured = await ensureFileSystem(
      request.efs,
      request.ec2,
      {
        fleetId: request.fleetId,
        jobId: request.jobId,
        ownerInstanceId: request.placement.instanceId,
        availabilityZoneName: request.placement.availabilityZone,
        kmsKeyId: request.kmsKeyId,
      },
      waitOptions,
    );
    const fileSystemId = ensured.fileSystem.FileSystemId!;
    made.fileSystemId = fileSystemId;
    reused = ensured.reused;
    log(`${reused ? 'reusing' : 'created'} file system ${fileSystemId}`);

    phase('waiting', `for ${fileSystemId} to become available`);
    if (ensured.fileSystem.LifeCycleState !== 'available') {
      await waitForFileSystem(request.efs, fileSystemId, waitOptions);
    }
    log(`${fileSystemId} is available`);

    phase('mount-target', `in ${request.subnetId} with security group ${request.securityGroupId}`);
    const ensuredTarget = await ensureMountTarget(
      request.efs,
      fileSystemId,
      { subnetId: request.subnetId, securityGroupId: request.securityGroupId },
      waitOptions,
    );
    const mountTarget = await waitForMountTarget(request.efs, ensuredTarget.mountTarget, waitOptions);
    log(
      `${ensuredTarget.reused ? 'reusing' : 'created'} mount target ${mountTarget.MountTargetId} at ${mountTarget.IpAddress}`,
    );

    if (stop.signal.aborted) throw new ScratchInterrupted();
    phase('mounting', `${fileSystemId} at ${request.path} (tls, mounttargetip=${mountTarget.IpAddress})`);
    if (isMounted(request.path)) {
      throw new Error(
        `${request.path} is already a mount point: unmount it (umount -l ${request.path}) or pass another --path`,
      );
    }
    made.firstCreatedDirectory = mkdirSync(request.path, { recursive: true });
    try {
      await mountFileSystem({
        fileSystemId,
        path: request.path,
        mountTargetIp: mountTarget.IpAddress,
        helper: request.mountHelper,
        signal: stop.signal,
      });
    } finally {
      // The path was no mount point a moment ago and the caller holds its lock, so the mount on top now,
      // even after a helper that failed half-way or was killed, is ours: teardown unmounts that one only.
      made.mount = topMountAt(request.path);
    }

    if (stop.signal.aborted) throw new ScratchInterrupted();
    phase('running', [request.command, ...request.args].join(' '));
    const running = startJob(request.command, request.args, {
      env: {
        ...(request.env ?? process.env),
        MOUNTFLEET_SCRATCH: request.path,
        MOUNTFLEET_JOB: request.jobId,
      },
    });
    job = await superviseJob(running, stop.signal, request.teardownGraceSeconds, clock, log);
    if (job.startError) log(job.startError);
    log(`job exited with status ${job.status}${job.signal ? ` (${job.signal})` : ''}`);
    await stopProcessGroup(running, stop.signal, request.teardownGraceSeconds, clock, log);
  } catch (err) {
    if (err instanceof CreateOutcomeUnknown) made.createOutcomeUnknown = true;
    if (err instanceof ScratchInUseError) inUse = true;
    // A call or helper cut off by the stop request is the interruption itself, not a setup failure.
    if (!(err instanceof ScratchInterrupted) && !stop.signal.aborted) {
      setupError = `${(err as Error).message}${retriesOf(err)}`;
      log(`setup failed: ${setupError}`);
    }
  } finally {
    terminationWatch.abort();
    request.stopSignal?.removeEventListener('abort', onExternalStop);
  }
  await terminationWatcher;

  const stoppedBy = stop.signal.aborted ? (stop.signal.reason as StopReason) : undefined;
  const { fileSystemId } = made;
  phase('tearing-down', fileSystemId ? `${fileSystemId} of job ${request.jobId}` : `job ${request.jobId}`);
  const teardownTimeoutMs = teardownBudgetMs(request.teardownTimeoutMs ?? 180_000, terminationNotice, clock);
  const teardown = await tearDown(request, made, teardownTimeoutMs, clock, log);
  reportTeardown(teardown, request, log);

  return {
    exitStatus: inUse ? EXIT_IN_USE : exitStatusOf(job, stoppedBy, setupError, teardown),
    job,
    stoppedBy,
    setupError,
    fileSystemId: fileSystemId ?? (teardown.status !== 'nothing-created' ? teardown.fileSystemId : undefined),
    reused,
    teardown,
  };
}

function exitStatusOf(
  job: JobExit | undefined,
  stoppedBy: StopReason | undefined,
  setupError: string | undefined,
  teardown: TeardownResult,
): number {
  const teardownFailed = teardown.status === 'incomplete';
  if (job !== undefined) return job.status !== 0 ? job.status : teardownFailed ? EXIT_SCRATCH_FAILED : 0;
  if (setupError !== undefined) return EXIT_SCRATCH_FAILED;
  if (stoppedBy !== undefined)
    return 128 + signalNumber(stoppedBy === 'SIGINT' || stoppedBy === 'SIGTERM' ? stoppedBy : 'SIGTERM');
  return teardownFailed ? EXIT_SCRATCH_FAILED : 0;
}

/**
 * Waits for CMD; on a stop request passes the signal on (SIGTERM for a termination notice), gives CMD its grace
 * period, then kills what is left of the job.
 */
async function superviseJob(
  running: RunningJob,
  stop: AbortSignal,
  graceSeconds: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<JobExit> {
  const stopped = new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    stop.addEventListener('abort', () => resolve(), { once: true });
  });
  const first = await Promise.race([running.exited, stopped.then(() => undefined)]);
  if (first !== undefined) return first;

  const reason = stop.reason as StopReason;
  const signal: NodeJS.Signals = reason === 'SIGINT' || reason === 'SIGTERM' ? reason : 'SIGTERM';
  const grace = instanceGoingAway(reason) ? Math.min(graceSeconds, SPOT_GRACE_SECONDS) : graceSeconds;
  log(`passing ${signal} to the job; it has ${grace} s to exit`);
  running.kill(signal);
  const graceOver = new AbortController();
  const exitedInTime = await Promise.race([
    running.exited,
    clock.sleep(grace * 1000, graceOver.signal).then(() => undefined),
  ]);
  graceOver.abort();
  if (exitedInTime !== undefined) return exitedInTime;
  log(`the job did not exit within ${grace} s: killing it`);
  running.kill('SIGKILL');
  // A process blocked in the kernel on a dead NFS server does not die until its I/O fails; deleting the
  // mount target (teardown) is what makes it fail, so teardown must not wait for the job for ever.
  const killWait = new AbortController();
  const died = await Promise.race([
    running.exited,
    clock.sleep(KILL_WAIT_MS, killWait.signal).then(() => undefined),
  ]);
  killWait.abort();
  if (died !== undefined) return died;
  log(
    `the job is still alive ${KILL_WAIT_MS / 1000} s after SIGKILL (blocked on I/O?): tearing down regardless`,
  );
  return { status: 128 + signalNumber('SIGKILL'), signal: 'SIGKILL' };
}

/**
 * The job's leader has exited; what it started in the background (same process group) must not outlive the
 * run and write into the path once it is unmounted (onto the root disk): SIGTERM to the group, its grace
 * period, then SIGKILL. Processes that left the group (setsid) are out of reach here.
 */
async function stopProcessGroup(
  running: RunningJob,
  stop: AbortSignal,
  graceSeconds: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<void> {
  const gone = async (waitMs: number) => {
    const until = clock.now() + waitMs;
    while (running.remaining().length > 0) {
      if (clock.now() >= until) return false;
      await clock.sleep(100);
    }
    return true;
  };
  if (running.remaining().length === 0) return;
  const grace =
    stop.aborted && instanceGoingAway(stop.reason as StopReason)
      ? Math.min(graceSeconds, SPOT_GRACE_SECONDS)
      : graceSeconds;
  log(
    `the job left ${running.remaining().length} process(es) behind: SIGTERM to its process group, ${grace} s to exit`,
  );
  running.kill('SIGTERM');
  if (await gone(grace * 1000)) return;
  log(`processes of the job are still alive after ${grace} s: killing its process group`);
  running.kill('SIGKILL');
  if (!(await gone(KILL_WAIT_MS))) {
    log(
      `processes ${running.remaining().join(', ')} of the job survive SIGKILL (blocked on I/O?): tearing down regardless`,
    );
  }
}

/** On a Spot notice, teardown must finish before the instance goes: bound it by the announced time. */
function teardownBudgetMs(defaultMs: number, notice: TerminationNotice | undefined, clock: Clock): number {
  const at = notice?.time?.getTime();
  if (at === undefined || Number.isNaN(at)) return defaultMs;
  return Math.min(defaultMs, Math.max(15_000, at - clock.now() - 5_000));
}

interface RunResources {
  /** The file system this run created or reused. */
  fileSystemId?: string;
  /** CreateFileSystem got no clear answer: a file system with the job's token may be this run's. */
  createOutcomeUnknown: boolean;
  /** The mount this run made at the path (its /proc/self/mountinfo entry). */
  mount?: MountEntry;
  /** The outermost directory this run created for the path (mkdirSync's answer), if any. */
  firstCreatedDirectory?: string;
}

/** Removes the directories this run created, innermost first, up to and including the first one. */
function removeCreatedDirectories(path: string, firstCreated: string): void {
  const top = resolve(firstCreated);
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    rmdirSync(dir);
    if (dir === top || dirname(dir) === dir) return;
  }
}

async function tearDown(
  request: ScratchRunRequest,
  made: RunResources,
  timeoutMs: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<TeardownResult> {
  let fileSystemId = made.fileSystemId;
  try {
    if (made.mount !== undefined) {
      const unmounted = await unmount(request.path, made.mount);
      if (unmounted === 'not-ours')
        log(`${request.path}: the mount on top is no longer the one this run made: left alone`);
      else if (unmounted !== 'not-mounted')
        log(`unmounted ${request.path}${unmounted === 'lazy' ? ' (lazily: still busy)' : ''}`);
    }
  } catch (err) {
    // Deleting the mount target below cuts the NFS session anyway; keep going.
    log(`unmount: ${(err as Error).message}`);
  }
  if (made.firstCreatedDirectory !== undefined) {
    try {
      removeCreatedDirectories(request.path, made.firstCreatedDirectory);
    } catch (err) {
      // Still mounted, or something else was put there meanwhile: leave it rather than guess.
      log(`cannot remove the directories this run created for ${request.path}: ${(err as Error).message}`);
    }
  }
  if (fileSystemId === undefined && !made.createOutcomeUnknown) return { status: 'nothing-created' };

  const deadline = clock.now() + timeoutMs;
  const unreachableTimeoutMs = request.unreachableTimeoutMs ?? DEFAULT_UNREACHABLE_TIMEOUT_MS;
  let lastError = '';
  let teardownMarked = false;
  let unreachableSince: number | undefined;
  const giveUpAt = () => Math.min(deadline, (unreachableSince ?? Infinity) + unreachableTimeoutMs);
  for (let attempt = 0; clock.now() < giveUpAt(); attempt++) {
    // Cut off at the bound, and every call after unreachableTimeoutMs: the SDK's own retries against a
    // black hole (socket timeouts times attempts) would take minutes.
    const bound = AbortSignal.timeout(Math.max(1, giveUpAt() - clock.now()));
    const callBound = () => AbortSignal.any([bound, AbortSignal.timeout(unreachableTimeoutMs)]);
    try {
      if (fileSystemId === undefined) {
        const found = await findFileSystemByToken(
          request.efs,
          creationToken(request.fleetId, request.jobId),
          callBound(),
        );
        if (found === undefined) return { status: 'nothing-created' };
        // Our create would have tagged it with this fleet and instance; anything else holding the token is not ours.
        const owner = tagValue(found, TAG_OWNER_INSTANCE);
        const fleet = tagValue(found, TAG_FLEET);
        if (owner !== request.placement.instanceId || fleet !== request.fleetId) {
          log(
            `${found.FileSystemId} holds the job's CreationToken but belongs to ${owner ?? 'no instance'} ` +
              `in fleet ${fleet ?? '(none)'}: left alone`,
          );
          return { status: 'nothing-created' };
        }
        fileSystemId = found.FileSystemId!;
      }
      if (!teardownMarked) {
        teardownMarked = true;
        const failed = await markTeardownStarted(request.efs, fileSystemId, clock.now(), callBound());
        if (failed) log(`cannot tag ${fileSystemId} as being torn down (${failed}); tearing down anyway`);
      }
      const outcome = await teardownFileSystem(request.efs, fileSystemId, {
        clock,
        maxWaitMs: Math.max(0, giveUpAt() - clock.now()),
        onProgress: log,
        signal: bound,
        callTimeoutMs: unreachableTimeoutMs,
      });
      if (outcome.status !== 'pending') {
        return { status: outcome.status, fileSystemId, mountTargetsDeleted: outcome.mountTargetsDeleted };
      }
      unreachableSince = undefined;
      lastError = outcome.reason;
      if (outcome.cause !== 'in-use') break;
    } catch (err) {
      // Out of time while AWS was answering: keep the last real error.
      if (bound.aborted && unreachableSince === undefined) break;
      if (answeredByService(err)) unreachableSince = undefined;
      // A call abandoned after unreachableTimeoutMs: AWS has been silent for that long already.
      else if (isTimeout(err)) unreachableSince ??= clock.now() - unreachableTimeoutMs;
      else unreachableSince ??= clock.now();
      lastError = errorText(err);
      log(`teardown attempt ${attempt + 1} failed (${lastError}); retrying`);
    }
    await clock.sleep(Math.min(backoffDelay(attempt, 1000, 10_000), Math.max(0, giveUpAt() - clock.now())));
  }
  return {
    status: 'incomplete',
    cause: unreachableSince === undefined ? 'not-deleted' : 'unreachable',
    fileSystemId,
    reason:
      unreachableSince === undefined
        ? lastError || `out of time (${Math.round(timeoutMs / 1000)} s)`
        : `no answer from AWS for ${Math.round((clock.now() - unreachableSince) / 1000)} s: ${lastError}`,
  };
}

function reportTeardown(
  teardown: TeardownResult,
  request: ScratchRunRequest,
  log: (line: string) => void,
): void {
  switch (teardown.status) {
    case 'deleted':
      log(
        `deleted ${teardown.fileSystemId}${teardown.mountTargetsDeleted > 0 ? ' and its mount target' : ''}`,
      );
      return;
    case 'already-gone':
      log(`${teardown.fileSystemId} was already gone`);
      return;
    case 'nothing-created':
      log(`no file system was created for job ${request.jobId}`);
      return;
    case 'incomplete': {
      const what = teardown.fileSystemId ?? `the file system of job ${request.jobId}`;
      const headline =
        teardown.cause === 'unreachable'
          ? `TEARDOWN INCOMPLETE (cannot reach AWS): ${what} was not deleted (${teardown.reason}).`
          : `TEARDOWN INCOMPLETE (could not delete): ${what} still exists (${teardown.reason}).`;
      log(
        `${headline} It keeps its tags ${TAG_FLEET}=${request.fleetId}, ${TAG_OWNER_INSTANCE}=${request.placement.instanceId}, ` +
          `${TAG_JOB}=${request.jobId}: the orphan reaper deletes it once this instance is gone or it is idle; to finish now, ` +
          `run \`mountfleet scratch delete ${teardown.fileSystemId ?? '<id>'}\` or \`mountfleet reap --fleet ${request.fleetId}\`` +
          `${teardown.cause === 'unreachable' ? ' once AWS is reachable' : ''} (re-running this job id also reuses it).`,
      );
      return;
    }
  }
}
