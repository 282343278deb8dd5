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
import { mkdirSync } from 'node:fs';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EFSClient } from '@aws-sdk/client-efs';
import { systemClock, type Clock } from '../clock';
import {
  describeTermination,
  TERMINATION_POLL_MS,
  watchForTermination,
  type TerminationNotice,
} from '../termination-watch';
import { signalNumber, startJob, systemdScopeFor, type JobExit } from './job';
import { isMounted, mountFileSystem, topMountAt } from './mount';
import { ensureMountTarget, waitForMountTarget } from './mount-target';
import type { WaitOptions } from './poll';
import { ensureFileSystem, waitForFileSystem } from './provision';
import { CreateOutcomeUnknown, ScratchInterrupted, ScratchInUseError } from './setup-errors';
import { stopProcessGroup, superviseJob, type StopReason } from './supervise';
import {
  reportTeardown,
  tearDown,
  teardownBudgetMs,
  type RunResources,
  type TeardownResult,
} from './teardown';

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

/** For an AWS error, how hard the SDK tried: ` (after 10 attempts, 12.3 s of retry delays)`; '' otherwise. */
function retriesOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause ?? err;
  const meta = (cause as { $metadata?: { attempts?: number; totalRetryDelay?: number } }).$metadata;
  if (meta?.attempts === undefined) return '';
  return ` (after ${meta.attempts} attempt(s), ${((meta.totalRetryDelay ?? 0) / 1000).toFixed(1)} s of retry delays)`;
}

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
      scope: systemdScopeFor(request.fleetId, request.jobId),
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
