/**
 * What started a reaper run. EventBridge delivers the schedule and two EC2 events that mean an instance is
 * going away; anything else is acknowledged and ignored (throwing would only make EventBridge retry it).
 */
import { endsScratchJob, ownerStateOfInstance, ownerStateOfNotice } from '../contract';
import { INSTANCE_ID_PATTERN } from './decide';

type ReaperTrigger =
  | { readonly kind: 'schedule' }
  | {
      readonly kind: 'instance-gone';
      readonly instanceId: string;
      readonly cause: string;
      /** The event says the instance has ended for good (not a warning): a claim reaper.ts checks with EC2. */
      readonly confirmed: boolean;
    }
  | { readonly kind: 'ignored'; readonly reason: string };

interface EventShape {
  readonly 'detail-type'?: unknown;
  readonly detail?: Record<string, unknown>;
}

export function parseReaperEvent(event: unknown): ReaperTrigger {
  const e = (event ?? {}) as EventShape;
  const type = e['detail-type'];
  // A manual invocation (console test event, `aws lambda invoke` with {}) runs the full scan.
  if (type === undefined || type === 'Scheduled Event') return { kind: 'schedule' };
  const instanceId = e.detail?.['instance-id'];
  const validInstance = typeof instanceId === 'string' && INSTANCE_ID_PATTERN.test(instanceId);
  switch (type) {
    case 'EC2 Spot Instance Interruption Warning': {
      if (!validInstance)
        return { kind: 'ignored', reason: 'interruption warning without a valid instance-id' };
      const action = String(e.detail?.['instance-action'] ?? 'terminate');
      // The agent tears scratch down on every interruption, stop and hibernate included (core/contract/owner-state.ts).
      if (!endsScratchJob(ownerStateOfNotice('spot', action))) {
        return { kind: 'ignored', reason: `interruption action ${action}: not one that ends a job` };
      }
      // A warning: the instance runs for two more minutes, and its job may still be writing to scratch.
      return {
        kind: 'instance-gone',
        instanceId,
        cause: `Spot interruption warning (${action})`,
        confirmed: false,
      };
    }
    case 'EC2 Instance State-change Notification': {
      if (!validInstance)
        return { kind: 'ignored', reason: 'state-change notification without a valid instance-id' };
      const state = String(e.detail?.state);
      const ownerState = ownerStateOfInstance(state);
      if (ownerState === 'alive')
        return { kind: 'ignored', reason: `${instanceId} is ${state}: not going away` };
      // Only an end EC2 confirms lifts the grace period (reaper.ts checks the claim with DescribeInstances);
      // a stopped instance's scratch is deleted after the grace period, as the owner lookup shows it stopped.
      return {
        kind: 'instance-gone',
        instanceId,
        cause: `state-change notification (${state})`,
        confirmed: ownerState === 'gone',
      };
    }
    default:
      return { kind: 'ignored', reason: `unhandled event type ${JSON.stringify(type)}` };
  }
}
