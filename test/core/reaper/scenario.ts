/**
 * Builds reaper scenarios in the emulator: owner instances in a given state, scratch file systems with or
 * without a mount target and idle mark, and ClientConnections datapoints seeded into `AWS/EFS`; and the
 * emulator behind one fault proxy for a reaper test file.
 */
import { PutMetricDataCommand, type CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import {
  RunInstancesCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { DescribeFileSystemsCommand, type EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import {
  batchClient,
  cloudWatchClient,
  ec2Client,
  efsClient,
  taggingClient,
} from '../../../core/aws/clients';
import type { Clock } from '../../../core/common/clock';
import type { ReaperClients } from '../../../core/reaper/reaper';
import { TAG_BATCH_JOB, TAG_BATCH_QUEUE } from '../../../core/contract/batch';
import { creationToken } from '../../../core/contract/creation-token';
import { TAG_FLEET, TAG_MARKED_IDLE_AT, TAG_TEARDOWN_STARTED_AT } from '../../../core/contract/tags';
import { useEmulator, type Emulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import { createNetwork, createScratchFileSystem, type TestNetwork } from '../../support/fixtures';

/**
 * Jest hooks for a reaper test file: the emulator, and one fault proxy in front of it for the whole file
 * that every client from core/aws/clients.ts goes through from beforeAll on (so scenarios built in a beforeAll see
 * its rules too). Rules and counts carry over between tests: each test clears what it needs. `random`
 * replaces the proxy's random source, for a fault pattern that is the same on every run.
 */
export function useReaperEmulator(
  options: { readonly random?: () => number } = {},
): Emulator & { readonly proxy: FaultProxy } {
  const emulator = useEmulator();
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emulator.endpoint, random: options.random });
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
  });
  afterAll(() => proxy?.stop());
  return {
    endpoint: emulator.endpoint,
    reset: () => emulator.reset(),
    get proxy(): FaultProxy {
      if (!proxy) throw new Error('useReaperEmulator: the proxy starts in beforeAll; use it inside tests');
      return proxy;
    },
  };
}

/** Fresh reaper clients, as a new Lambda container has (adaptive retry state included). */
export function reaperClients(): ReaperClients {
  return {
    efs: efsClient(),
    ec2: ec2Client(),
    cloudwatch: cloudWatchClient(),
    tagging: taggingClient(),
    batch: batchClient(),
  };
}

/**
 * Fleet `f1` in one subnet with a running and a terminated owner, and two file systems with a mount
 * target: an orphan (its owner terminated) and one in use (its owner running, a connection 10 min ago).
 */
export async function seedFleet(clients: ReaperClients) {
  const net = await createNetwork(clients.ec2, 1);
  const [running] = await launchOwners(clients.ec2, 'f1', 'running');
  const [terminated] = await launchOwners(clients.ec2, 'f1', 'terminated');
  const orphan = await createFileSystem(clients.efs, net, {
    fleet: 'f1',
    owner: terminated,
    mountTarget: true,
  });
  const inUse = await createFileSystem(clients.efs, net, { fleet: 'f1', owner: running, mountTarget: true });
  await seedConnections(clients.cloudwatch, [inUse], [1], Date.now());
  return { net, running, terminated, orphan, inUse };
}

/** An instance id in the right format that EC2 has never heard of. */
export const UNKNOWN_INSTANCE = 'i-0123456789abcdef0';

export type OwnerState = 'running' | 'stopped' | 'terminated';

/** Launches `count` instances tagged with the fleet and brings them to `state`. */
export async function launchOwners(
  ec2: EC2Client,
  fleet: string,
  state: OwnerState,
  count = 1,
  subnetId?: string,
): Promise<string[]> {
  const run = await ec2.send(
    new RunInstancesCommand({
      ImageId: 'ami-12c6146b',
      InstanceType: 't3.micro',
      MinCount: count,
      MaxCount: count,
      SubnetId: subnetId,
      TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: TAG_FLEET, Value: fleet }] }],
    }),
  );
  const ids = run.Instances!.map((i) => i.InstanceId!);
  if (state === 'terminated') await ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
  if (state === 'stopped') await ec2.send(new StopInstancesCommand({ InstanceIds: ids }));
  return ids;
}

/** A fixed clock `offsetMinutes` after the real time (moto stamps CreationTime with the real time). */
export function clockAt(
  offsetMinutes: number,
  base = Date.now(),
): Clock & { advance(minutes: number): void } {
  let now = base + offsetMinutes * 60_000;
  return {
    now: () => now,
    sleep: async (ms) => void (now += ms),
    advance: (minutes) => void (now += minutes * 60_000),
  };
}

export interface FileSystemSpec {
  readonly fleet?: string;
  readonly owner?: string;
  readonly mountTarget?: boolean;
  /** ISO time for `mountfleet:marked-idle-at`. */
  readonly markedIdleAt?: string;
  /** ISO time for `mountfleet:teardown-started-at`. */
  readonly teardownStartedAt?: string;
  /** CreationToken. @default the fleet's own form, `mf/<fleet>/<job>` */
  readonly token?: string;
  /** A Batch run's file system: `mountfleet:batch-queue` = this queue, `mountfleet:batch-job` = `batchJob`. */
  readonly batchQueue?: string;
  readonly batchJob?: string;
}

let tokens = 0;
export async function createFileSystem(
  efs: EFSClient,
  net: TestNetwork,
  spec: FileSystemSpec,
): Promise<string> {
  return createScratchFileSystem(
    efs,
    {
      fleet: spec.fleet,
      owner: spec.owner,
      job: `job-${++tokens}`,
      mountTargetSubnet: spec.mountTarget ? net.subnets[0] : undefined,
      securityGroupId: net.securityGroupId,
      extraTags: [
        ...(spec.markedIdleAt ? [{ Key: TAG_MARKED_IDLE_AT, Value: spec.markedIdleAt }] : []),
        ...(spec.teardownStartedAt ? [{ Key: TAG_TEARDOWN_STARTED_AT, Value: spec.teardownStartedAt }] : []),
        ...(spec.batchQueue ? [{ Key: TAG_BATCH_QUEUE, Value: spec.batchQueue }] : []),
        ...(spec.batchJob ? [{ Key: TAG_BATCH_JOB, Value: spec.batchJob }] : []),
      ],
    },
    // The fleet's own CreationToken form unless told otherwise: the reaper deletes nothing else.
    spec.token ?? creationToken(spec.fleet ?? 'untagged', `job-${process.pid}-${tokens}`),
  );
}

/** Seeds one ClientConnections datapoint per value, a minute apart, ending `minutesAgo` before `now`. */
export async function seedConnections(
  cloudwatch: CloudWatchClient,
  fileSystemIds: readonly string[],
  values: readonly number[],
  now: number,
  minutesAgo = 10,
): Promise<void> {
  const data = fileSystemIds.flatMap((id) =>
    values.map((value, i) => ({
      MetricName: 'ClientConnections',
      Dimensions: [{ Name: 'FileSystemId', Value: id }],
      Timestamp: new Date(now - (minutesAgo + i) * 60_000),
      Value: value,
      Unit: 'Count' as const,
    })),
  );
  // PutMetricData takes up to 1,000 datapoints per call.
  for (let i = 0; i < data.length; i += 1000) {
    await cloudwatch.send(
      new PutMetricDataCommand({ Namespace: 'AWS/EFS', MetricData: data.slice(i, i + 1000) }),
    );
  }
}

export async function describeAll(efs: EFSClient): Promise<Map<string, FileSystemDescription>> {
  const all = new Map<string, FileSystemDescription>();
  let marker: string | undefined;
  do {
    const page = await efs.send(new DescribeFileSystemsCommand({ MaxItems: 100, Marker: marker }));
    for (const fs of page.FileSystems ?? []) all.set(fs.FileSystemId!, fs);
    marker = page.NextMarker || undefined;
  } while (marker);
  return all;
}

export function tagOf(fs: FileSystemDescription | undefined, key: string): string | undefined {
  return fs?.Tags?.find((t) => t.Key === key)?.Value;
}

/** A DescribeFileSystems body rewrite that reports the given lifecycle state for some file systems. */
export function withLifecycleState(states: Readonly<Record<string, string>>) {
  return withDescription(
    Object.fromEntries(Object.entries(states).map(([id, state]) => [id, { LifeCycleState: state }])),
  );
}

/** A field's new value: null removes the field, a function maps the old value. */
export type FieldChange = unknown;

/**
 * A DescribeFileSystems (or DescribeMountTargets) body rewrite that shows what moto cannot make: fields
 * changed per resource, keyed by file system id (mount targets by their FileSystemId too). A value of null
 * removes the field (e.g. `AvailabilityZoneName` of a Regional file system); a function maps the old value.
 */
export function withDescription(changes: Readonly<Record<string, Record<string, FieldChange>>>) {
  return (body: string): string => {
    const parsed = JSON.parse(body) as {
      FileSystems?: Record<string, unknown>[];
      MountTargets?: Record<string, unknown>[];
    };
    for (const item of [...(parsed.FileSystems ?? []), ...(parsed.MountTargets ?? [])]) {
      for (const [key, value] of Object.entries(changes[item.FileSystemId as string] ?? {})) {
        if (value === null) delete item[key];
        else
          item[key] = typeof value === 'function' ? (value as (old: unknown) => unknown)(item[key]) : value;
      }
    }
    return JSON.stringify(parsed);
  };
}
