/**
 * A fleet's job queue as `batch submit` and the teardown read it: the contract tags on the queue
 * (core/contract/batch.ts) and, for a scratch run, the subnet of its zone where the run's mount target goes.
 */
import { DescribeJobQueuesCommand, type BatchClient, type JobQueueDetail } from '@aws-sdk/client-batch';
import { DescribeSubnetsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { errorName, UsageError } from '../common';
import {
  TAG_BATCH_AZ_ID,
  TAG_BATCH_MOUNT_PATHS,
  TAG_BATCH_SCRATCH_SECURITY_GROUP,
  TAG_BATCH_SCRATCH_SUBNET,
  TAG_FLEET,
} from '../contract';

/** A job queue of a fleet, from its tags. */
export interface FleetQueue {
  readonly name: string;
  readonly arn: string;
  readonly fleetId: string;
  /** The AZ ID its compute environment runs in. */
  readonly azId: string;
  /** The fleet's Mountpoint paths on the host: a job definition used with the queue binds each read-only. */
  readonly mountPaths: readonly string[];
  /** The subnet and security group for a run's mount target; absent on a queue without scratch. */
  readonly scratch?: { readonly subnetId: string; readonly securityGroupId: string };
}

/** Where a run's One Zone file system and its mount target go. */
export interface ScratchPlacement {
  readonly subnetId: string;
  readonly securityGroupId: string;
  /** CreateFileSystem takes the zone's name, not its ID. */
  readonly availabilityZoneName: string;
}

/**
 * Reads the queue (name or ARN) and its contract tags; a queue Batch does not know, or one without the fleet's
 * tags, is a UsageError naming `--queue` and the fix.
 */
export async function readFleetQueue(
  batch: BatchClient,
  queue: string,
  signal?: AbortSignal,
): Promise<FleetQueue> {
  const q = await describeQueue(batch, queue, signal);
  const tags = q.tags ?? {};
  const missing = [TAG_FLEET, TAG_BATCH_AZ_ID, TAG_BATCH_MOUNT_PATHS].filter((k) => !tags[k]);
  if (missing.length > 0) {
    throw new UsageError(
      `--queue ${queue}: the job queue carries no ${missing.join(', ')} tag: it is not a mountfleet fleet's queue ` +
        "(BatchComputeFleet makes and tags them); pass one of the fleet's queues",
    );
  }
  const subnetId = tags[TAG_BATCH_SCRATCH_SUBNET];
  const securityGroupId = tags[TAG_BATCH_SCRATCH_SECURITY_GROUP];
  return {
    name: q.jobQueueName,
    arn: q.jobQueueArn,
    fleetId: tags[TAG_FLEET],
    azId: tags[TAG_BATCH_AZ_ID],
    mountPaths: tags[TAG_BATCH_MOUNT_PATHS].split(':').filter(Boolean),
    scratch: subnetId && securityGroupId ? { subnetId, securityGroupId } : undefined,
  };
}

/** The queue (name or ARN) as Batch describes it; a UsageError naming `--queue` when Batch knows none. */
export async function describeQueue(
  batch: BatchClient,
  queue: string,
  signal?: AbortSignal,
): Promise<JobQueueDetail & { jobQueueArn: string; jobQueueName: string }> {
  const out = await batch.send(new DescribeJobQueuesCommand({ jobQueues: [queue] }), { abortSignal: signal });
  const q = out.jobQueues?.[0];
  if (q?.jobQueueArn === undefined || q.jobQueueName === undefined) {
    throw new UsageError(
      `--queue ${queue}: no such job queue in this account and Region: pass the name or ARN of one of the fleet's job queues ` +
        '(`aws batch describe-job-queues` lists them; check --region)',
    );
  }
  return { ...q, jobQueueArn: q.jobQueueArn, jobQueueName: q.jobQueueName };
}

/**
 * The queue's scratch subnet, checked to lie in the queue's zone (One Zone: the job runs there, so its file
 * system must be there); a queue without one, or whose subnet is elsewhere or gone, is a UsageError.
 */
export async function scratchPlacement(
  ec2: EC2Client,
  queue: FleetQueue,
  signal?: AbortSignal,
): Promise<ScratchPlacement> {
  const flag = `--scratch on --queue ${queue.name}`;
  if (queue.scratch === undefined) {
    throw new UsageError(
      `${flag}: the queue names no scratch subnet and security group (tags ${TAG_BATCH_SCRATCH_SUBNET}, ${TAG_BATCH_SCRATCH_SECURITY_GROUP}): ` +
        'submit without --scratch, or to a queue of a fleet deployed with scratch',
    );
  }
  let subnet;
  try {
    const out = await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [queue.scratch.subnetId] }), {
      abortSignal: signal,
    });
    subnet = out.Subnets?.[0];
  } catch (err) {
    if (errorName(err) !== 'InvalidSubnetID.NotFound') throw err;
  }
  if (subnet?.AvailabilityZone === undefined) {
    throw new UsageError(
      `${flag}: its scratch subnet ${queue.scratch.subnetId} does not exist: redeploy the fleet (its queue tags are stale)`,
    );
  }
  if (subnet.AvailabilityZoneId !== queue.azId) {
    throw new UsageError(
      `${flag}: its scratch subnet ${queue.scratch.subnetId} is in zone ${subnet.AvailabilityZoneId ?? '(unknown)'}, ` +
        `not the queue's ${queue.azId}: a One Zone file system there could not be mounted by the queue's jobs; redeploy the fleet`,
    );
  }
  return {
    subnetId: queue.scratch.subnetId,
    securityGroupId: queue.scratch.securityGroupId,
    availabilityZoneName: subnet.AvailabilityZone,
  };
}
