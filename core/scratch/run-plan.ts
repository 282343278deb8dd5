/**
 * A `scratch run` planned once. The flags (agent/commands/scratch.ts reads each one into a ScratchRunRequest)
 * and agent.json merge into one ScratchRunPlan, checked in the order docs/scratch.md gives (steps 0 and 1):
 * the burst-credit preflight, agent.json and the fleet, the `--summary` file, then the local checks and locks
 * (local-setup.ts), then IMDS, then this zone's subnet and security group and the grace (settings.ts). What
 * comes after (run.ts, lifecycle.ts) takes every setting from the plan and derives none again.
 */
import { EXIT_STATUS, MountfleetError, UsageError, withoutTrailingSlash } from '../common';
import { DEFAULT_SCRATCH_PATH, agentPaths } from '../contract';
import { metadataService, readInstanceIdentity, type InstanceIdentity } from '../instance';
import { burstCreditPreflight, type CreditGuardOptions, type OnCreditLow, type RunSummary } from '../credit';
import { BUILT_IN_PRICES } from '../plan';
import type { InstancePlacement } from './lifecycle';
import { prepareLocalRun, type LocalSetup } from './local-setup';
import { loadOptionalAgentConfig, resolveFleetId, zoneSettings, type ZoneSettings } from './settings';

/** `scratch run` as its flags ask for it, each value read and checked as the flag was (agent/commands/scratch.ts). */
export interface ScratchRunRequest {
  /** CMD and its arguments. */
  readonly command: readonly string[];
  readonly jobId: string;
  /** No `--job`: the id was generated, and the run says which. */
  readonly jobIdGenerated: boolean;
  readonly fleet?: string;
  /** `--path`, held to the mount-path rules. */
  readonly path?: string;
  readonly subnet?: string;
  readonly securityGroup?: string;
  readonly teardownGraceSeconds?: number;
  /** `--config`. */
  readonly configPath?: string;
  /** 0 refuses a held job id or path at once; undefined waits without limit; n waits at most n seconds. */
  readonly waitLockSeconds?: number;
  readonly spotPollMs: number;
  readonly expectedIoBytes?: number;
  /** Refuse, rather than warn, when `--expected-io` exceeds the burst credit. */
  readonly strict: boolean;
  readonly creditCheckSeconds: number;
  readonly onCreditLow: OnCreditLow;
  readonly expectedDurationSeconds?: number;
  /** `--summary FILE`. */
  readonly summaryPath?: string;
  /** MOUNTFLEET_EFS_MOUNT_HELPER; the system's mount.efs when unset. */
  readonly mountHelper?: string;
}

/** A file the run writes its summary to, opened by the caller before the run (agent/output.ts's OutputFile). */
export interface SummaryDestination {
  /** Replaces the file's content; throws an Error naming the file when it cannot. */
  write(text: string): void;
  /** Closes the file, and removes it when the run created it and never wrote it. */
  discard(): void;
}

/** SIGINT and SIGTERM hooked for the run: the first aborts `signal`, with the signal's name as its reason. */
interface StopHook {
  readonly signal: AbortSignal;
  dispose(): void;
}

/** What a run needs of the program around it. */
export interface ScratchRunIo {
  /** A progress line, or what went wrong (stderr). */
  readonly log: (line: string) => void;
  /** Opens `--summary FILE` (a file that cannot be written is a UsageError). */
  readonly openSummary: (path: string) => SummaryDestination;
  readonly stopOnSignals: () => StopHook;
  /** The run's outcome, the last line of stderr. */
  readonly printSummary: (summary: RunSummary) => void;
}

/** The burst-credit guard's settings: when it checks, what it does at 90 %, what it quotes, where its metrics go. */
export type CreditGuardSettings = Pick<
  CreditGuardOptions,
  'intervalSeconds' | 'onCreditLow' | 'expectedIoBytes' | 'expectedDurationSeconds' | 'elasticPrices'
> & { readonly metricsLogFile: string };

/** A scratch run with every setting resolved, and what it holds on this instance until release(). */
export interface ScratchRunPlan extends LocalSetup, ZoneSettings {
  readonly fleetId: string;
  readonly jobId: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly region: string;
  readonly placement: InstancePlacement;
  readonly mountHelper?: string;
  /** How often IMDS is asked for a Spot notice. */
  readonly terminationPollMs: number;
  readonly creditGuard: CreditGuardSettings;
  readonly expectedIoBytes?: number;
  readonly summaryFile?: SummaryDestination;
  /** MOUNTFLEET_RUN_DIR: where the run's locks and its record for the agent go. */
  readonly runDir: string;
  /** Aborted by SIGINT or SIGTERM. */
  readonly stopSignal: AbortSignal;
  /** Lets go of the summary file (removed if never written), the locks, the checked directory and the signals. */
  release(): void;
}

/** IMDS reads at start: 1 s per attempt, retried with jittered backoff for up to this long in all. */
const IMDS_BUDGET_MS = 15_000;

/**
 * Checks and settles everything the run needs before its first AWS call, holding the locks and the path's
 * directory on the way; throws an error carrying its exit status (a UsageError 2, an InUseError 75, a
 * MountfleetError 1 when this is no EC2 instance) with nothing left held.
 */
export async function planScratchRun(request: ScratchRunRequest, io: ScratchRunIo): Promise<ScratchRunPlan> {
  sayPreflight(request, io.log);
  const config = loadOptionalAgentConfig(request.configPath);
  const fleetId = resolveFleetId(request.fleet, config);
  // Before any AWS call: a summary that cannot be written is a usage error now, not a surprise after the job.
  const summaryFile = request.summaryPath === undefined ? undefined : io.openSummary(request.summaryPath);
  const stops = io.stopOnSignals();
  let local: LocalSetup | undefined;
  const release = () => {
    summaryFile?.discard();
    local?.locks.release();
    local?.checkedPath.release();
    stops.dispose();
  };
  try {
    const { runDir, metricsLogFile } = agentPaths();
    local = await prepareLocalRun({
      runDir,
      fleetId,
      jobId: request.jobId,
      path: withoutTrailingSlash(request.path ?? config?.scratch?.path ?? DEFAULT_SCRATCH_PATH),
      waitLockSeconds: request.waitLockSeconds,
      mountHelper: request.mountHelper,
      signal: stops.signal,
      log: io.log,
    });
    const identity = await readIdentity(stops.signal);
    const zone = zoneSettings(request, config, identity.availabilityZoneId);
    if (request.jobIdGenerated) io.log(`job id ${request.jobId}`);
    return {
      ...local,
      ...zone,
      fleetId,
      jobId: request.jobId,
      command: request.command[0],
      args: request.command.slice(1),
      region: identity.region,
      placement: placementOf(identity),
      mountHelper: request.mountHelper,
      terminationPollMs: request.spotPollMs,
      creditGuard: creditGuardSettings(request, identity.region, metricsLogFile),
      expectedIoBytes: request.expectedIoBytes,
      summaryFile,
      runDir,
      stopSignal: stops.signal,
      release,
    };
  } catch (err) {
    release();
    throw err;
  }
}

/** `--expected-io` against the burst credit: said, or (with `--strict`, over the credit) refused. */
function sayPreflight(request: ScratchRunRequest, log: (line: string) => void): void {
  if (request.expectedIoBytes === undefined) return;
  const verdict = burstCreditPreflight(request.expectedIoBytes, request.strict);
  if (verdict.status === 'refuse') throw new UsageError(`refusing (--strict): ${verdict.message}`);
  log(verdict.status === 'warn' ? `WARNING: ${verdict.message}` : verdict.message);
}

/** This instance's identity from IMDS; when IMDS does not answer, a MountfleetError (exit 1) says so. */
async function readIdentity(signal: AbortSignal): Promise<InstanceIdentity> {
  const imds = metadataService({ timeoutMs: 1000, budgetMs: IMDS_BUDGET_MS, signal });
  try {
    return await readInstanceIdentity(imds);
  } catch (err) {
    throw new MountfleetError(
      `cannot read this instance's identity from IMDS (${(err as Error).message}): scratch run works on EC2 instances only; ` +
        `nothing was created`,
      EXIT_STATUS.failure,
      { cause: err },
    );
  } finally {
    imds.close();
  }
}

function placementOf(identity: InstanceIdentity): InstancePlacement {
  const { instanceId, availabilityZone, availabilityZoneId } = identity;
  return { instanceId, availabilityZone, availabilityZoneId };
}

function creditGuardSettings(
  request: ScratchRunRequest,
  region: string,
  metricsLogFile: string,
): CreditGuardSettings {
  const prices = BUILT_IN_PRICES[region];
  return {
    intervalSeconds: request.creditCheckSeconds,
    onCreditLow: request.onCreditLow,
    expectedIoBytes: request.expectedIoBytes,
    expectedDurationSeconds: request.expectedDurationSeconds,
    elasticPrices: prices && {
      region: prices.region,
      readPerGb: prices.efsElasticReadPerGb,
      writePerGb: prices.efsElasticWritePerGb,
    },
    metricsLogFile,
  };
}
