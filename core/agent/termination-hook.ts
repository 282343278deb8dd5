/**
 * The instance's side of the Auto Scaling termination lifecycle hook that ComputeFleet creates: while
 * `mountfleet up` runs, it watches IMDS `autoscaling/target-lifecycle-state`; on `Terminated` it waits (a
 * bounded time) for the `scratch run` processes on the instance — which see the same state themselves and
 * tear their file systems down — then stops the mounts and completes the hook with CONTINUE, so the
 * instance goes as soon as it is clean instead of when the hook times out.
 */
import {
  CompleteLifecycleActionCommand,
  DescribeAutoScalingInstancesCommand,
  type AutoScalingClient,
} from '@aws-sdk/client-auto-scaling';
import { PollTimeout, pollUntil, type Clock, type PollResult } from '../common';
import { type InstanceMetadataReader, autoScalingTerminationReader, watchForTermination } from '../instance';
import { activeScratchRuns, type ScratchRunRecord } from '../scratch';

/** Longer than a scratch run's worst case after the notice: 10 s grace, 5 s kill wait, 180 s teardown. */
const DEFAULT_SCRATCH_WAIT_MS = 240_000;

interface TerminationHookOptions {
  readonly imds: InstanceMetadataReader;
  readonly autoScaling: AutoScalingClient;
  /** From agent.json `lifecycleHook.name`. */
  readonly hookName: string;
  readonly instanceId: string;
  /** Where scratch runs record themselves (core/scratch/registry.ts). */
  readonly runDir: string;
  /** Stops the mounts (what `mountfleet down` does) and resolves when they are stopped. */
  readonly stopMounts: () => Promise<void>;
  /** Ends the watch without acting (the agent is stopping for another reason). */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly log: (event: Record<string, unknown>) => void;
  /** @default TERMINATION_POLL_MS */
  readonly pollMs?: number;
  /** @default DEFAULT_SCRATCH_WAIT_MS */
  readonly scratchWaitMs?: number;
}

type TerminationHookOutcome = 'not-terminating' | 'completed' | 'not-completed';

/** Watches until Auto Scaling terminates the instance (then cleans up and completes the hook) or the signal. */
export async function handleAutoScalingTermination(
  o: TerminationHookOptions,
): Promise<TerminationHookOutcome> {
  const notice = await watchForTermination(autoScalingTerminationReader(o.imds), {
    clock: o.clock,
    pollMs: o.pollMs,
    signal: o.signal,
    log: (message) => o.log({ event: 'lifecycle-watch', message }),
  });
  if (!notice) return 'not-terminating';
  const scratchRuns = activeScratchRuns(o.runDir);
  o.log({ event: 'terminating', scratchRuns: scratchRuns.map((r) => r.jobId) });

  // Scratch runs first: their jobs may still write results to the S3 mounts in their grace period.
  const left = await waitForScratchRuns(o.runDir, o.scratchWaitMs ?? DEFAULT_SCRATCH_WAIT_MS, o.clock);
  if (left.length > 0) {
    o.log({
      event: 'scratch-runs-still-running',
      jobs: left.map((r) => r.jobId),
      note: 'their file systems keep their tags; the orphan reaper deletes them',
    });
  }
  await o.stopMounts();

  try {
    const groupName = await autoScalingGroupOf(o.autoScaling, o.instanceId);
    await o.autoScaling.send(
      new CompleteLifecycleActionCommand({
        AutoScalingGroupName: groupName,
        LifecycleHookName: o.hookName,
        InstanceId: o.instanceId,
        LifecycleActionResult: 'CONTINUE',
      }),
    );
    o.log({ event: 'lifecycle-action-completed', autoScalingGroup: groupName, hook: o.hookName });
    return 'completed';
  } catch (err) {
    // The hook's own timeout (default result CONTINUE) lets the instance go anyway, only later.
    o.log({ event: 'lifecycle-action-failed', hook: o.hookName, error: (err as Error).message });
    return 'not-completed';
  }
}

/** Waits until no scratch run is alive or the time is up; returns those still running. */
async function waitForScratchRuns(
  runDir: string,
  timeoutMs: number,
  clock: Clock,
): Promise<ScratchRunRecord[]> {
  let running: ScratchRunRecord[] = [];
  const noneRunning = async (): Promise<PollResult<true>> => {
    running = activeScratchRuns(runDir);
    return running.length === 0 ? { value: true } : { state: `${running.length} scratch runs alive` };
  };
  try {
    await pollUntil(noneRunning, {
      clock,
      timeoutMs,
      initialPollMs: 500,
      maxPollMs: 500,
      random: () => 1, // a fixed 500 ms between looks, no jitter
    });
  } catch (err) {
    if (!(err instanceof PollTimeout)) throw err;
  }
  return running;
}

/**
 * The group this instance belongs to, from DescribeAutoScalingInstances — which the instance role already
 * has — rather than the `aws:autoscaling:groupName` tag, which would need ec2:DescribeTags as well.
 */
async function autoScalingGroupOf(autoScaling: AutoScalingClient, instanceId: string): Promise<string> {
  const answer = await autoScaling.send(
    new DescribeAutoScalingInstancesCommand({ InstanceIds: [instanceId] }),
  );
  const name = answer.AutoScalingInstances?.[0]?.AutoScalingGroupName;
  if (!name) throw new Error(`${instanceId} is in no Auto Scaling group`);
  return name;
}
