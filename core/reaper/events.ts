/**
 * What started a reaper run. EventBridge delivers the schedule and two EC2 events that mean an instance is
 * going away; anything else is acknowledged and ignored (throwing would only make EventBridge retry it).
 */
import { INSTANCE_ID_PATTERN } from './decide';

export type ReaperTrigger =
  | { readonly kind: 'schedule' }
  | {
      readonly kind: 'instance-gone';
      readonly instanceId: string;
      readonly cause: string;
      /** The instance has stopped running for good (not a warning ahead of it). */
      readonly confirmed: boolean;
    }
  | { readonly kind: 'ignored'; readonly reason: string };

interface EventShape {
  readonly 'detail-type'?: unknown;
  readonly detail?: Record<string, unknown>;
}

/** States of an `EC2 Instance State-change Notification` after which the instance never comes back. */
const GONE_STATES = new Set(['shutting-down', 'terminated']);

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
      const action = e.detail?.['instance-action'];
      // stop and hibernate interruptions resume the instance later, with its scratch still needed.
      if (action !== undefined && action !== 'terminate') {
        return {
          kind: 'ignored',
          reason: `interruption action ${String(action)}: ${instanceId} will resume`,
        };
      }
      // A warning: the instance runs for two more minutes, and its job may still be writing to scratch.
      return {
        kind: 'instance-gone',
        instanceId,
        cause: 'Spot interruption warning (terminate)',
        confirmed: false,
      };
    }
    case 'EC2 Instance State-change Notification': {
      if (!validInstance)
        return { kind: 'ignored', reason: 'state-change notification without a valid instance-id' };
      const state = String(e.detail?.state);
      if (!GONE_STATES.has(state))
        return { kind: 'ignored', reason: `${instanceId} is ${state}: not going away` };
      return {
        kind: 'instance-gone',
        instanceId,
        cause: `state-change notification (${state})`,
        confirmed: true,
      };
    }
    default:
      return { kind: 'ignored', reason: `unhandled event type ${JSON.stringify(type)}` };
  }
}
