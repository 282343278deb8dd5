/**
 * Watching IMDS for this instance going away, shared by `scratch run` (tears its file system down) and
 * `mountfleet up` (unmounts, waits for scratch runs, completes the Auto Scaling termination hook).
 *
 * Two announcements exist: a Spot interruption notice (`spot/instance-action`, about two minutes ahead)
 * and Auto Scaling's `autoscaling/target-lifecycle-state` turning `Terminated` (scale-in, rebalancing,
 * health replacement, and Spot interruptions of group members too), which a termination lifecycle hook
 * holds open until the instance completes it or the hook times out. Both are polled every 5 s.
 */
import { type Clock, pollUntil, type PollResult } from '../common';
import { endsScratchJob, ownerStateOfNotice } from '../contract';
import {
  metadataService,
  readSpotInstanceAction,
  readTargetLifecycleState,
  type InstanceMetadataReader,
} from './imds';

/** Notices must be seen within this long: AWS gives two minutes' warning of a Spot interruption. */
export const TERMINATION_POLL_MS = 5000;

export interface TerminationNotice {
  /** Who announced it. */
  readonly source: 'spot' | 'auto-scaling';
  /** Spot: terminate, stop or hibernate; Auto Scaling: terminate. */
  readonly action: string;
  /** When EC2 will act, where it says (Spot only). */
  readonly time?: Date;
}

/** The Auto Scaling termination, when the group has started it; undefined otherwise (or outside a group). */
export function autoScalingTerminationReader(
  imds: InstanceMetadataReader = metadataService(),
): () => Promise<TerminationNotice | undefined> {
  return async () =>
    (await readTargetLifecycleState(imds)) === 'Terminated'
      ? { source: 'auto-scaling', action: 'terminate' }
      : undefined;
}

/** Either announcement, the Spot notice first when both are up. */
export function terminationNoticeReader(
  imds: InstanceMetadataReader = metadataService(),
): () => Promise<TerminationNotice | undefined> {
  const autoScaling = autoScalingTerminationReader(imds);
  return async () => {
    const [spot, scaling] = await Promise.all([readSpotInstanceAction(imds), autoScaling()]);
    return spot ? { source: 'spot', ...spot } : scaling;
  };
}

interface WatchOptions {
  readonly clock: Clock;
  /** @default TERMINATION_POLL_MS */
  readonly pollMs?: number;
  /** Ends the watch (the watch then resolves undefined). */
  readonly signal: AbortSignal;
  readonly log: (line: string) => void;
}

/**
 * Polls READ every pollMs (pollUntil, no deadline) until it returns a notice (resolves with it) or the signal
 * fires (resolves undefined). Best effort, like the notices themselves: a failed read is reported once and
 * polling goes on.
 */
export async function watchForTermination(
  read: () => Promise<TerminationNotice | undefined>,
  options: WatchOptions,
): Promise<TerminationNotice | undefined> {
  let reportedError = false;
  const readOnce = async (): Promise<PollResult<TerminationNotice>> => {
    try {
      const notice = await read();
      // Which notices end the job is the rule core/contract/owner-state.ts writes down for the reaper too.
      if (
        notice &&
        endsScratchJob(ownerStateOfNotice(notice.source, notice.action)) &&
        !options.signal.aborted
      )
        return { value: notice };
    } catch (err) {
      if (!reportedError)
        options.log(
          `cannot read termination notices from IMDS (will keep trying): ${(err as Error).message}`,
        );
      reportedError = true;
    }
    return { state: 'no notice' };
  };
  const pollMs = options.pollMs ?? TERMINATION_POLL_MS;
  try {
    return await pollUntil(readOnce, {
      clock: options.clock,
      signal: options.signal,
      timeoutMs: Infinity,
      initialPollMs: pollMs,
      maxPollMs: pollMs,
      random: () => 1, // every pollMs, no jitter
    });
  } catch (err) {
    if (options.signal.aborted && err === options.signal.reason) return undefined;
    throw err;
  }
}

/** One line for logs: what is happening and when. */
export function describeTermination(notice: TerminationNotice): string {
  return notice.source === 'spot'
    ? `Spot interruption notice: ${notice.action} at ${notice.time?.toISOString() ?? 'an unknown time'}`
    : 'Auto Scaling is terminating this instance (target-lifecycle-state Terminated)';
}
