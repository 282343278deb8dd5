/** The EventBridge "Batch Job State Change" event, as far as the teardown reads it (its detail is a JobDetail). */
import type { JobDetail } from '@aws-sdk/client-batch';

/** The fields of the event's detail the teardown uses. */
export type JobStateDetail = Pick<
  JobDetail,
  'jobId' | 'jobName' | 'jobQueue' | 'jobDefinition' | 'status' | 'statusReason' | 'attempts' | 'container'
> & {
  readonly jobId: string;
  readonly jobQueue: string;
  readonly jobDefinition: string;
  readonly status: string;
};

/** The event's detail, or why the event is not one the teardown reads. */
export function parseJobStateChange(event: unknown): JobStateDetail | { readonly ignored: string } {
  const e = event as { source?: unknown; 'detail-type'?: unknown; detail?: Record<string, unknown> } | null;
  if (e?.source !== 'aws.batch' || e['detail-type'] !== 'Batch Job State Change') {
    return { ignored: `not a Batch Job State Change event (source ${String(e?.source)})` };
  }
  const d = e.detail ?? {};
  for (const key of ['jobId', 'jobQueue', 'jobDefinition', 'status'] as const) {
    if (typeof d[key] !== 'string') return { ignored: `the event's detail has no ${key}` };
  }
  return d as unknown as JobStateDetail;
}

/**
 * How ECS says a container could not start because a volume would not mount: the ECS agent's volume errors
 * (`CannotCreateVolumeError`, and since its EFS volume plugin mounts at container start, `CannotStartContainerError`
 * … "failed to mount volume"), or Fargate's "failed to invoke EFS utils commands". No AWS page lists these
 * strings (they come from the ECS agent's source, aws/amazon-ecs-agent), so a reason must both name such an error
 * and speak of a volume, EFS or a mount.
 */
const VOLUME_START_ERROR =
  /^(CannotCreateVolumeError|CannotStartContainerError|ResourceInitializationError)\b/;
const ABOUT_A_VOLUME = /volume|efs|mount/i;

/**
 * Why a Batch retry would retry this ended attempt, or undefined: a non-zero exit of the container, the host lost
 * (instance terminated, Spot reclaimed: "Host EC2 (instance i-…) terminated."), or the container not started
 * because its EFS volume did not mount (a new run gets a new file system and mount target). A cancelled or
 * terminated job ends with the reason its canceller gave, and is not retried (Batch does not retry those either).
 */
export function retryableReason(detail: JobStateDetail): string | undefined {
  if (detail.status !== 'FAILED') return undefined;
  const last = detail.attempts?.at(-1);
  const reasons = [
    detail.statusReason,
    last?.statusReason,
    last?.container?.reason,
    detail.container?.reason,
  ].filter((r): r is string => typeof r === 'string');
  const hostLost = reasons.find((r) => r.startsWith('Host EC2'));
  if (hostLost) return `host lost (${hostLost})`;
  const volume = reasons.find((r) => VOLUME_START_ERROR.test(r) && ABOUT_A_VOLUME.test(r));
  if (volume) return `its volume did not mount (${volume})`;
  const exitCode = last?.container?.exitCode ?? detail.container?.exitCode;
  if (
    detail.statusReason === 'Essential container in task exited' &&
    exitCode !== undefined &&
    exitCode !== 0
  ) {
    return `exit status ${exitCode}`;
  }
  return undefined;
}
