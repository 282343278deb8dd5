/**
 * Batched reads behind the reaper's decisions. Nothing here is called once per file system:
 *
 * - file systems: one DescribeFileSystems page per 100 (each entry carries tags, state, mount-target count);
 * - connections: one GetMetricData call per 500 file systems (its query limit);
 * - owners: EC2 rejects more than 200 values in one filter (FilterLimitExceeded), and an unknown id in
 *   `InstanceIds` fails the whole call, so owners are looked up with the `instance-id` filter, 200 per call;
 *   when more than 200 owners are wanted, one query on the fleet tag (pages of 1,000) answers the fleet's
 *   own instances first, and only the owners it did not return are looked up by id.
 *
 * - Batch jobs: batch-jobs.ts (DescribeJobs, 100 ids a call).
 *
 * A failed read never turns into evidence: the affected file systems get `unavailable` / `lookup-failed`.
 */
import {
  GetMetricDataCommand,
  type CloudWatchClient,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';
import type { EC2Client, Filter } from '@aws-sdk/client-ec2';
import { DescribeFileSystemsCommand, type EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import { errorText, undefinedIfNotFound } from '../common';
import { foreignReason, mapFleetFileSystems, tagValue } from '../efs';
import {
  TAG_BATCH_JOB,
  TAG_BATCH_QUEUE,
  TAG_FLEET,
  TAG_JOB,
  TAG_MARKED_IDLE_AT,
  TAG_OWNER_INSTANCE,
  TAG_RUN,
  TAG_TEARDOWN_STARTED_AT,
  ownerReleasedScratch,
  ownerStateOfInstance,
} from '../contract';
import { type ConnectionEvidence, type FileSystemFacts, type OwnerEvidence } from './decide';

const METRIC_QUERIES_PER_CALL = 500;
/** Shared by every file system they describe: one object each, not one per file system. */
const NO_DATA: ConnectionEvidence = { kind: 'no-data' };
const IDLE: ConnectionEvidence = { kind: 'idle' };
const INSTANCE_FILTER_VALUES_PER_CALL = 200;
const INSTANCES_PER_PAGE = 1000;

/**
 * Every file system tagged `mountfleet:fleet` = fleetId; others are dropped here and never looked at again.
 * Those the fleet did not make (core/efs/fleet-file-systems.ts foreignReason) are listed with the reason, to be
 * reported and kept. Each page's descriptions become facts as they arrive: at 100,000 file systems, holding the
 * descriptions (~1.5 KB each as the SDK parses them) rather than the facts (~0.4 KB) cost 145 MB more.
 */
export function listFleetFileSystems(
  efs: EFSClient,
  fleetId: string,
  onPage?: () => void,
): Promise<FileSystemFacts[]> {
  return mapFleetFileSystems(efs, fleetId, (fs) => factsOf(fs, fleetId), onPage);
}

/** What the reaper's decisions read from one DescribeFileSystems entry. */
export function factsOf(fs: FileSystemDescription, fleetId: string): FileSystemFacts {
  return {
    id: fs.FileSystemId!,
    arn: fs.FileSystemArn,
    foreign: foreignReason(fs, fleetId),
    teardownStartedAt: tagValue(fs, TAG_TEARDOWN_STARTED_AT),
    lifeCycleState: fs.LifeCycleState ?? 'unknown',
    createdAt: fs.CreationTime?.getTime() ?? 0,
    mountTargets: fs.NumberOfMountTargets ?? 0,
    ownerInstanceId: tagValue(fs, TAG_OWNER_INSTANCE),
    jobId: tagValue(fs, TAG_JOB),
    runId: tagValue(fs, TAG_RUN),
    markedIdleAt: tagValue(fs, TAG_MARKED_IDLE_AT),
    fleet: tagValue(fs, TAG_FLEET),
    batchQueue: tagValue(fs, TAG_BATCH_QUEUE),
    batchJobId: tagValue(fs, TAG_BATCH_JOB),
  };
}

/**
 * The one file system as it is now (one DescribeFileSystems by id), or undefined when it is gone: `scratch
 * delete`'s last look (liveness.ts), and the reaper's re-check of a file system its batch's page did not show
 * (recheck.ts).
 */
export async function describeFacts(
  efs: EFSClient,
  fileSystemId: string,
  fleetId: string,
): Promise<FileSystemFacts | undefined> {
  const fs = await undefinedIfNotFound('FileSystemNotFound', async () => {
    const out = await efs.send(new DescribeFileSystemsCommand({ FileSystemId: fileSystemId }));
    return out.FileSystems?.[0];
  });
  return fs === undefined || fs.LifeCycleState === 'deleted' ? undefined : factsOf(fs, fleetId);
}

interface MetricWindow {
  readonly start: Date;
  readonly end: Date;
}

/** The window ending `lagMinutes` before now, aligned to whole minutes (CloudWatch's 1-minute buckets). */
export function connectionWindow(now: number, windowMinutes: number, lagMinutes: number): MetricWindow {
  const end = Math.floor((now - lagMinutes * 60_000) / 60_000) * 60_000;
  return { start: new Date(end - windowMinutes * 60_000), end: new Date(end) };
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * ClientConnections Sum over the whole window for each file system, 500 per GetMetricData call. One period
 * spanning the window answers all the rules need: a Sum above zero is a connection; a datapoint with Sum 0
 * means samples existed and all were zero; no datapoint means CloudWatch has nothing (not zero).
 */
export async function readConnections(
  cloudwatch: CloudWatchClient,
  fileSystemIds: readonly string[],
  window: MetricWindow,
): Promise<Map<string, ConnectionEvidence>> {
  const result = new Map<string, ConnectionEvidence>();
  for (const batch of chunks(fileSystemIds, METRIC_QUERIES_PER_CALL)) {
    const queries: MetricDataQuery[] = batch.map((id, i) => ({
      Id: `q${i}`,
      MetricStat: {
        Metric: {
          Namespace: 'AWS/EFS',
          MetricName: 'ClientConnections',
          Dimensions: [{ Name: 'FileSystemId', Value: id }],
        },
        Period: Math.round((window.end.getTime() - window.start.getTime()) / 1000),
        Stat: 'Sum',
      },
      ReturnData: true,
    }));
    const values = new Map<string, number[]>(queries.map((q) => [q.Id!, []]));
    try {
      let nextToken: string | undefined;
      do {
        const page = await cloudwatch.send(
          new GetMetricDataCommand({
            MetricDataQueries: queries,
            StartTime: window.start,
            EndTime: window.end,
            NextToken: nextToken,
          }),
        );
        for (const r of page.MetricDataResults ?? []) {
          if (r.Id && values.has(r.Id)) values.get(r.Id)!.push(...(r.Values ?? []));
        }
        nextToken = page.NextToken || undefined;
      } while (nextToken);
    } catch (err) {
      for (const id of batch) result.set(id, { kind: 'unavailable', error: errorText(err) });
      continue;
    }
    batch.forEach((id, i) => {
      const points = values.get(`q${i}`)!;
      const total = points.reduce((a, b) => a + b, 0);
      result.set(
        id,
        points.length === 0 ? NO_DATA : total > 0 ? { kind: 'in-use', connections: total } : IDLE,
      );
    });
  }
  return result;
}

async function describeInstanceStates(
  ec2: EC2Client,
  filters: Filter[],
  into: Map<string, string>,
): Promise<void> {
  // Loaded here, not at module load: client-ec2 is 2 MB of JavaScript (~200 ms), and a Lambda cold start
  // should not pay for it when no owner needs looking up (core/aws/clients.ts loads the client itself the same way).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DescribeInstancesCommand } = require('@aws-sdk/client-ec2') as typeof import('@aws-sdk/client-ec2');
  let nextToken: string | undefined;
  do {
    const page = await ec2.send(
      new DescribeInstancesCommand({
        Filters: filters,
        MaxResults: INSTANCES_PER_PAGE,
        NextToken: nextToken,
      }),
    );
    for (const reservation of page.Reservations ?? []) {
      for (const instance of reservation.Instances ?? []) {
        if (instance.InstanceId) into.set(instance.InstanceId, instance.State?.Name ?? 'unknown');
      }
    }
    nextToken = page.NextToken || undefined;
  } while (nextToken);
}

/** What an owner's EC2 state means, by the shared rule of core/contract/owner-state.ts. */
function ownerEvidence(state: string | undefined): OwnerEvidence {
  if (state === undefined)
    return {
      kind: 'gone',
      ownerState: 'gone',
      unknown: true,
      detail: 'is unknown to EC2 (terminated long ago or never existed)',
    };
  const ownerState = ownerStateOfInstance(state);
  if (!ownerReleasedScratch(ownerState)) return { kind: 'present', state };
  return {
    kind: 'gone',
    ownerState,
    detail:
      ownerState === 'stopped'
        ? `is ${state}: a stopped instance keeps no NFS mount and its job has ended`
        : `is ${state}`,
  };
}

/** The state of each owner instance; ids must be well-formed instance ids. */
export async function lookupOwners(
  ec2: EC2Client,
  fleetId: string,
  instanceIds: readonly string[],
): Promise<Map<string, OwnerEvidence>> {
  const wanted = [...new Set(instanceIds)];
  const states = new Map<string, string>();
  const failed = new Map<string, string>();
  let remaining = wanted;
  if (wanted.length > INSTANCE_FILTER_VALUES_PER_CALL) {
    try {
      await describeInstanceStates(ec2, [{ Name: `tag:${TAG_FLEET}`, Values: [fleetId] }], states);
      remaining = wanted.filter((id) => !states.has(id));
    } catch {
      // Fall back to looking every owner up by id; each chunk then succeeds or fails on its own.
    }
  }
  for (const batch of chunks(remaining, INSTANCE_FILTER_VALUES_PER_CALL)) {
    try {
      await describeInstanceStates(ec2, [{ Name: 'instance-id', Values: batch }], states);
    } catch (err) {
      for (const id of batch) failed.set(id, errorText(err));
    }
  }
  return new Map(
    wanted.map((id): [string, OwnerEvidence] => {
      const error = failed.get(id);
      return [id, error !== undefined ? { kind: 'lookup-failed', error } : ownerEvidence(states.get(id))];
    }),
  );
}
