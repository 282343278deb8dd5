/**
 * A whole `scratch run`: its plan (run-plan.ts), the run's record for the agent, the run itself (lifecycle.ts)
 * with its clients and its burst-credit guard, then its summary; resolves to the status to exit with.
 */
import { EXIT_STATUS } from '../common';
import { cloudWatchClient, efsClient } from '../aws';
import { terminationNoticeReader } from '../instance';
import { appendCreditMetrics, runSummary, type RunSummary } from '../credit';
import { runScratchJob, type CreditGuardRequest, type ScratchJobRequest } from './lifecycle';
import { registerScratchRun } from './registry';
import {
  planScratchRun,
  type CreditGuardSettings,
  type ScratchRunIo,
  type ScratchRunPlan,
  type ScratchRunRequest,
  type SummaryDestination,
} from './run-plan';

/** SDK attempts per call (adaptive retry): setup must ride out the throttling of many jobs starting at once. */
const SCRATCH_MAX_ATTEMPTS = 10;

/**
 * Plans the run and carries it out: the job's exit status, or 1 when the job succeeded but its summary could
 * not be written. What stops the plan is thrown, carrying its exit status (run-plan.ts).
 */
export async function runScratch(request: ScratchRunRequest, io: ScratchRunIo): Promise<number> {
  const plan = await planScratchRun(request, io);
  let unregister = () => undefined as void;
  try {
    unregister = recordRun(plan, io.log);
    const result = await runScratchJob(jobRequest(plan, io.log));
    const summary = runSummary({ jobId: plan.jobId, ...result, expectedIoBytes: plan.expectedIoBytes });
    if (!reportSummary(summary, plan.summaryFile, io) && result.exitStatus === 0) {
      io.log('the run succeeded but its --summary was not written: exiting 1');
      return EXIT_STATUS.failure;
    }
    return result.exitStatus;
  } finally {
    unregister();
    plan.release();
  }
}

/** So that `mountfleet up` waits for this teardown before it lets Auto Scaling terminate the instance. */
function recordRun(plan: ScratchRunPlan, log: (line: string) => void): () => void {
  try {
    return registerScratchRun(plan.runDir, plan.jobId);
  } catch (err) {
    log(
      `cannot record this run for the agent (${(err as Error).message}): an Auto Scaling termination will not wait for it`,
    );
    return () => undefined;
  }
}

function jobRequest(plan: ScratchRunPlan, log: (line: string) => void): ScratchJobRequest {
  return {
    efs: efsClient({ region: plan.region, maxAttempts: SCRATCH_MAX_ATTEMPTS }),
    placement: plan.placement,
    fleetId: plan.fleetId,
    jobId: plan.jobId,
    path: plan.path,
    createdDirectory: plan.createdDirectory,
    checkedPath: plan.checkedPath,
    lockFds: plan.locks.fds,
    subnetId: plan.subnetId,
    securityGroupId: plan.securityGroupId,
    kmsKeyId: plan.kmsKeyId,
    teardownGraceSeconds: plan.teardownGraceSeconds,
    command: plan.command,
    args: plan.args,
    mountHelper: plan.mountHelper,
    readTerminationNotice: terminationNoticeReader(),
    terminationPollMs: plan.terminationPollMs,
    stopSignal: plan.stopSignal,
    log,
    creditGuard: creditGuard(plan.creditGuard, plan.region, plan.fleetId),
  };
}

/** The guard with its CloudWatch client; its metrics go to the agent metrics log. */
function creditGuard(settings: CreditGuardSettings, region: string, fleetId: string): CreditGuardRequest {
  const { metricsLogFile, ...guard } = settings;
  return {
    ...guard,
    // Few attempts: a throttled check is simply retried at the next one.
    cloudwatch: cloudWatchClient({ region, maxAttempts: 2 }),
    // A failed write throws: the guard says so once and carries a mode switch to the next line written.
    publish: (metrics) => appendCreditMetrics(metricsLogFile, fleetId, metrics, Date.now()),
  };
}

/**
 * The run's outcome as JSON: into `--summary FILE` when given, and always as the last line of stderr. False
 * when the file was asked for and could not be written.
 */
function reportSummary(summary: RunSummary, file: SummaryDestination | undefined, io: ScratchRunIo): boolean {
  let written = true;
  try {
    file?.write(`${JSON.stringify(summary, null, 2)}\n`);
  } catch (err) {
    io.log((err as Error).message);
    written = false;
  }
  // For logs that keep only stderr.
  io.printSummary(summary);
  return written;
}
