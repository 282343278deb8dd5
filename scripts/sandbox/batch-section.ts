/**
 * The sandbox's Batch section (issue 31): the Batch stack deployed beside the Auto Scaling group's, four jobs
 * submitted with the real CLI and played through the stand-ins (batch-scheduler.ts, batch-container.ts,
 * batch-events.ts), then what is left counted from the emulator: the fleet's scratch file systems and ACTIVE
 * per-run job-definition revisions (`mf-<fleet>-*`), both to be 0.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  BatchClient,
  DeregisterJobDefinitionCommand,
  DescribeComputeEnvironmentsCommand,
  DescribeJobDefinitionsCommand,
  DescribeJobQueuesCommand,
  RegisterJobDefinitionCommand,
  type JobQueueDetail,
} from '@aws-sdk/client-batch';
import { DescribeSubnetsCommand, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { clientConfig, ec2Client, efsClient } from '../../core/aws/clients';
import {
  DEFAULT_BATCH_SCRATCH_PATH,
  TAG_BATCH_AZ_ID,
  TAG_BATCH_MOUNT_PATHS,
  TAG_BATCH_SCRATCH_SUBNET,
  TAG_BATCH_SCRATCH_PATH,
  TAG_FLEET,
  runJobDefinitionPrefix,
} from '../../core/contract';
import { EMULATOR_ACCOUNT } from '../../test/support/cdk-cli';
import type { FaultProxy } from '../../test/support/fault-proxy';
import { LambdaInvokeStandIn } from '../../test/support/lambda-invoke-standin';
import {
  physicalIds,
  removeStandIns,
  standInForSkippedResources,
} from '../../test/support/cloudformation-gaps-standin';
import { removeBatchStandIns, standInForBatchGaps, type BatchDeployStandIns } from './batch-deploy';
import { batchEventRoutes } from './batch-events';
import type { BatchJobRecord, BatchStage } from './batch-jobs';
import { PlayedBatchHost } from './batch-host';
import { playMountFaults, type MountFaultRecord } from './batch-mount-faults';
import { playBatchJobs } from './batch-scenarios';
import { agentConfigFromUserData } from './fleet';
import type { MountS3Choice } from './mounts';
import { BatchSchedulerStandIn } from './batch-scheduler';
import type { Progress } from './progress';
import { invokeDeployedHandler } from './reaper';
import { fleetScratch } from './scratch-jobs';

/** What the report shows of the Batch section. */
export interface BatchSectionReport {
  readonly stack: string;
  readonly fleetId: string;
  readonly queue?: string;
  readonly computeEnvironment?: string;
  /** The job definition the jobs were submitted with (registered as an operator would). */
  readonly jobDefinition?: string;
  /** The played instances of the compute environment (RunInstances from its launch template). */
  readonly instances?: string[];
  readonly standIns?: BatchDeployStandIns;
  readonly jobs?: BatchJobRecord[];
  /** The file the teardown handler's log lines went to. */
  readonly teardownLog?: string;
  /** Jobs on the played Batch host whose mount failed under them (Mountpoint killed, the Express zone dark). */
  readonly mountFaults?: MountFaultRecord[];
  /** Counted from the emulator at the end. */
  readonly leakedFileSystems?: string[];
  readonly activeRunRevisions?: string[];
}

export interface BatchSectionOptions {
  readonly stack: string;
  readonly fleetId: string;
  readonly templateFile: string;
  readonly outputs: Record<string, string>;
  readonly motoEndpoint: string;
  readonly workDir: string;
  /** Where the teardown handler's log lines go, and where they are kept after the run (the report names it). */
  readonly teardownLog: string;
  readonly teardownLogKept: string;
  /** The environment of the CLI (the emulator's; AWS_ENDPOINT_URL_BATCH is set here to the stand-in). */
  readonly env: NodeJS.ProcessEnv;
  /** What the played Batch host mounts through: the proxy (its black hole plays the dark zone), the Mountpoint. */
  readonly proxy: FaultProxy;
  readonly mountS3: MountS3Choice;
  readonly bucketsDir: string;
  readonly progress: Progress;
  readonly onCleanup: (what: string, run: () => Promise<void> | void) => void;
  /** Filled in as the section goes, so a failure still reports what was done. */
  readonly report: { batch?: BatchSectionReport };
}

/** Lists every ACTIVE revision whose name starts with `prefix` (DescribeJobDefinitions, all pages). */
async function activeRevisions(batch: BatchClient, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await batch.send(new DescribeJobDefinitionsCommand({ status: 'ACTIVE', nextToken }));
    for (const jd of page.jobDefinitions ?? [])
      if (jd.jobDefinitionName?.startsWith(prefix)) found.push(jd.jobDefinitionArn!);
    nextToken = page.nextToken;
  } while (nextToken);
  return found;
}

/**
 * The first of the stack's queues whose scratch subnet is in the queue's zone. moto's CloudFormation ignores a
 * subnet's AvailabilityZoneId and puts every subnet in its default zone (an emulator gap), so only the queue of
 * that zone passes the CLI's check (`mountfleet batch submit --scratch` refuses a subnet in another zone).
 */
async function queueInItsZone(
  batch: BatchClient,
  stack: string,
  outputs: Record<string, string>,
): Promise<JobQueueDetail> {
  const arns = Object.entries(outputs)
    .filter(([k]) => k.startsWith('JobQueue'))
    .sort()
    .map(([, v]) => v);
  if (arns.length === 0) throw new Error(`${stack} has no JobQueue<zone> output: is its scheduler "batch"?`);
  const queues = (await batch.send(new DescribeJobQueuesCommand({ jobQueues: arns }))).jobQueues ?? [];
  const seen: string[] = [];
  for (const q of queues) {
    const subnetId = q.tags?.[TAG_BATCH_SCRATCH_SUBNET];
    const subnet = subnetId
      ? (await ec2Client().send(new DescribeSubnetsCommand({ SubnetIds: [subnetId] }))).Subnets?.[0]
      : undefined;
    if (subnet?.AvailabilityZoneId === q.tags?.[TAG_BATCH_AZ_ID]) return q;
    seen.push(`${q.jobQueueName}: ${q.tags?.[TAG_BATCH_AZ_ID]}, subnet in ${subnet?.AvailabilityZoneId}`);
  }
  throw new Error(`no queue of ${stack} has its scratch subnet in its zone (${seen.join('; ')})`);
}

/**
 * The job definition the jobs are submitted with: the bundled app deploys none (the image is the user's), so
 * the sandbox registers one as an operator would — what FleetJobDefinition makes: the fleet's Mountpoint paths
 * bound read-only, the fleet's job role, the fleet and scratch-path tags. No image is pulled (container stand-in).
 */
async function registerJobDefinition(
  batch: BatchClient,
  fleetId: string,
  jobRoleArn: string,
  mountPaths: readonly string[],
): Promise<string> {
  const volumes = mountPaths.map((p, i) => ({ name: `mount${i}`, host: { sourcePath: p } }));
  const out = await batch.send(
    new RegisterJobDefinitionCommand({
      jobDefinitionName: `${fleetId}-demo`,
      type: 'container',
      containerProperties: {
        image: 'public.ecr.aws/docker/library/busybox:stable',
        jobRoleArn,
        resourceRequirements: [
          { type: 'VCPU', value: '1' },
          { type: 'MEMORY', value: '2048' },
        ],
        volumes,
        mountPoints: volumes.map((v) => ({
          sourceVolume: v.name,
          containerPath: v.host.sourcePath,
          readOnly: true,
        })),
      },
      tags: { [TAG_FLEET]: fleetId, [TAG_BATCH_SCRATCH_PATH]: DEFAULT_BATCH_SCRATCH_PATH },
    }),
  );
  return out.jobDefinitionArn!;
}

/** Plays the Batch section; resolves when every job has ended and what is left is counted. */
export async function playBatchSection(o: BatchSectionOptions): Promise<BatchSectionReport> {
  const { progress, onCleanup } = o;
  const report: { -readonly [K in keyof BatchSectionReport]: BatchSectionReport[K] } = {
    stack: o.stack,
    fleetId: o.fleetId,
  };
  o.report.batch = report;
  const scheduler = await BatchSchedulerStandIn.start(o.motoEndpoint);
  onCleanup('stop the Batch scheduler stand-in', async () => {
    delete process.env.AWS_ENDPOINT_URL_BATCH;
    await scheduler.stop();
  });
  // Every Batch client from here on (the CLI's, the functions' handlers') goes through the stand-in.
  process.env.AWS_ENDPOINT_URL_BATCH = scheduler.endpoint;
  // The CLI invokes the deployed submit function; moto cannot run it, so Lambda's Invoke is stood in for by the
  // function's deployed bundle, run with its deployed settings (invokeDeployedHandler).
  const submitFunction = await LambdaInvokeStandIn.start((name, payload) =>
    invokeDeployedHandler(name, 'batch-submit', payload as Record<string, unknown>, o.teardownLog),
  );
  onCleanup('stop the Lambda Invoke stand-in', () => submitFunction.stop());
  const batch = new BatchClient(clientConfig());
  const direct = new BatchClient({ ...clientConfig(), endpoint: o.motoEndpoint });

  report.standIns = await progress.step(
    `Batch: stand in for what the emulator's CloudFormation skipped (${o.stack}'s queue tags, job-definition casing)`,
    () => standInForBatchGaps(direct, o.templateFile, o.stack),
    (s) => `${s.taggedQueues.length} queues tagged`,
  );
  onCleanup('deregister the Batch stand-ins', () => removeBatchStandIns(direct, report.standIns!));
  const buckets = await progress.step(
    `Batch: stand in for ${o.stack}'s Express cache directory buckets (as ordinary buckets)`,
    () => standInForSkippedResources(o.templateFile, o.stack),
    (s) => s.directoryBuckets.join(', '),
  );
  onCleanup("remove the Batch stack's directory-bucket stand-ins", () => removeStandIns(buckets));

  const queue = await queueInItsZone(batch, o.stack, o.outputs);
  const ceArn = queue?.computeEnvironmentOrder?.[0]?.computeEnvironment;
  if (!queue.jobQueueName || !ceArn)
    throw new Error(`job queue ${queue.jobQueueArn} has no compute environment`);
  const ce = (await batch.send(new DescribeComputeEnvironmentsCommand({ computeEnvironments: [ceArn] })))
    .computeEnvironments?.[0];
  const lt = ce?.computeResources?.launchTemplate;
  const subnet = ce?.computeResources?.subnets?.[0];
  if (!ce?.computeEnvironmentName || !lt?.launchTemplateId || !subnet)
    throw new Error(`compute environment ${ceArn} has no launch template or subnet`);
  report.queue = queue.jobQueueName;
  report.computeEnvironment = ce.computeEnvironmentName;
  const mountPaths = (queue.tags?.[TAG_BATCH_MOUNT_PATHS] ?? '').split(':').filter(Boolean);

  const ids = await physicalIds(o.stack);
  const jobRole = [...ids.entries()].find(([logical]) => /BatchFleetJobRole[0-9A-F]{8}$/.test(logical))?.[1];
  if (!jobRole) throw new Error(`${o.stack} has no BatchFleet job role`);
  const jobDefinition = await registerJobDefinition(
    batch,
    o.fleetId,
    `arn:aws:iam::${EMULATOR_ACCOUNT}:role/${jobRole}`,
    mountPaths,
  );
  report.jobDefinition = jobDefinition;
  onCleanup('deregister the demo job definition', async () => {
    await direct.send(new DeregisterJobDefinitionCommand({ jobDefinition }));
  });

  // Batch launches the compute environment's instances from its launch template; two are played here.
  const instances = await progress.step(
    `Batch: two instances of ${ce.computeEnvironmentName} from its launch template`,
    async () => {
      const run = await ec2Client().send(
        new RunInstancesCommand({
          MinCount: 2,
          MaxCount: 2,
          SubnetId: subnet,
          LaunchTemplate: { LaunchTemplateId: lt.launchTemplateId, Version: lt.version },
        }),
      );
      return (run.Instances ?? []).map((i) => i.InstanceId!);
    },
    (ids) => ids.join(', '),
  );
  if (instances.length !== 2) throw new Error(`RunInstances gave ${instances.length} instances, not 2`);
  report.instances = instances;
  const terminated = new Set<string>();
  const terminate = async (instanceId: string) => {
    await ec2Client().send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    terminated.add(instanceId);
  };
  onCleanup('terminate the Batch instances', async () => {
    const left = instances.filter((i) => !terminated.has(i));
    if (left.length) await ec2Client().send(new TerminateInstancesCommand({ InstanceIds: left }));
  });
  // Each played instance's root: its Mountpoint paths are below it, and the job binds them read-only. The first
  // instance runs the fleet's agent on them (real mounts and the guard); the other's are plain directories.
  const hostRoot = (instanceId: string) => join(o.workDir, 'batch-hosts', instanceId);
  for (const i of instances) for (const p of mountPaths) mkdirSync(join(hostRoot(i), p), { recursive: true });
  const host = await progress.step(
    `Batch: the fleet's agent on ${instances[0]} (its launch template's agent.json: the mounts, the guard)`,
    async () =>
      PlayedBatchHost.start({
        workDir: o.workDir,
        instanceId: instances[0],
        zoneId: queue.tags![TAG_BATCH_AZ_ID],
        agentConfig: await agentConfigFromUserData(lt.launchTemplateId!),
        hostRoot: hostRoot(instances[0]),
        proxy: o.proxy,
        mountS3: o.mountS3,
        bucketsDir: o.bucketsDir,
        env: o.env,
        onCleanup,
      }),
    (h) => `mounts live, ready file there; job containers in ${h.taskCgroup}`,
  );

  report.teardownLog = o.teardownLogKept;
  const stage: BatchStage = {
    batch,
    efs: efsClient(),
    scheduler,
    routes: await batchEventRoutes(o.templateFile, o.stack),
    queueName: queue.jobQueueName,
    computeEnvironmentName: ce.computeEnvironmentName,
    jobDefinition,
    hostRoot,
    taskCgroup: (instanceId) => (instanceId === host.instanceId ? host.taskCgroup : undefined),
    cliEnv: {
      ...o.env,
      AWS_ENDPOINT_URL_BATCH: scheduler.endpoint,
      AWS_ENDPOINT_URL_LAMBDA: submitFunction.endpoint,
    },
    workDir: o.workDir,
    teardownLog: o.teardownLog,
    onCleanup,
  };
  if (!stage.routes.some((r) => r.functionNames.length > 0))
    throw new Error(`${o.stack} routes no Batch event to a function: no teardown deployed`);

  const jobs = await progress.step(
    'Batch: four jobs with mountfleet batch submit --scratch (succeeds, exit 3, cancelled, instance lost + retry)',
    () => playBatchJobs(stage, [instances[0], instances[1]], terminate),
    (js) => js.map((j) => `${j.name.replace(/-[0-9a-z]+$/, '')}: ${j.ok ? 'as expected' : 'NOT'}`).join('; '),
  );
  report.jobs = jobs;

  report.mountFaults = await progress.step(
    `Batch: the mount fails under a running job on ${host.instanceId} (Mountpoint killed; the zone's Express cache dark), each retried`,
    () => playMountFaults(stage, host, o.proxy, mountPaths[0]),
    (fs) => fs.map((f) => `${f.ok ? 'as expected' : 'NOT'}: ${f.outcome}`).join('; '),
  );

  const left = await progress.step(
    'Batch: what is left in the emulator (scratch file systems, ACTIVE mf-<fleet>-* revisions)',
    async () => ({
      fileSystems: (await fleetScratch(o.fleetId)).map((f) => f.fileSystemId),
      revisions: await activeRevisions(direct, runJobDefinitionPrefix(o.fleetId)),
    }),
    (l) => `${l.fileSystems.length} file systems, ${l.revisions.length} revisions`,
  );
  report.leakedFileSystems = left.fileSystems;
  report.activeRunRevisions = left.revisions;
  return report;
}

/** Whether the section went as it should: every job as expected, nothing left. */
export function batchSectionOk(r: BatchSectionReport | undefined): boolean {
  return (
    r?.jobs?.length === 4 &&
    r.jobs.every((j) => j.ok) &&
    r.mountFaults?.length === 2 &&
    r.mountFaults.every((f) => f.ok) &&
    r.leakedFileSystems?.length === 0 &&
    r.activeRunRevisions?.length === 0
  );
}
