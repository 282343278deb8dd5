/**
 * One Batch job as the sandbox plays it: submitted with the real CLI, placed by the scheduler stand-in on a
 * played instance, run by the container stand-in, ended as Batch would end it, and its "Job State Change"
 * delivered to the deployed teardown (event stand-in). Each attempt is recorded for the report.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  type BatchClient,
  type JobDefinition,
} from '@aws-sdk/client-batch';
import { DescribeFileSystemsCommand, type EFSClient } from '@aws-sdk/client-efs';
import { runCli } from '../../test/support/cli';
import { startContainer, type RunningContainer } from './batch-container';
import { deliverJobStateChange, type BatchEventRoute } from './batch-events';
import type { BatchSchedulerStandIn, JobEnding } from './batch-scheduler';

/** One attempt of a job, as the report shows it. */
export interface BatchAttemptRecord {
  readonly attempt: number;
  readonly jobId: string;
  /** The states the job went through (the scheduler stand-in's record). */
  states: string[];
  statusReason?: string;
  exitCode?: number;
  instanceId?: string;
  fileSystemId?: string;
  /** Whether the file system was gone after the teardown, and its revision deregistered. */
  fileSystemDeleted?: boolean;
  revisionDeregistered?: boolean;
  /** The teardown handler's answer to the event (or its error). */
  teardown?: unknown;
  /** The container's last output lines. */
  output?: string;
}

export interface BatchJobRecord {
  readonly name: string;
  readonly scenario: string;
  readonly attempts: BatchAttemptRecord[];
  outcome: string;
  ok: boolean;
}

/** Where the jobs run: the fleet's queue, its compute environment, the job definition, the played instances. */
export interface BatchStage {
  readonly batch: BatchClient;
  readonly efs: EFSClient;
  readonly scheduler: BatchSchedulerStandIn;
  readonly routes: readonly BatchEventRoute[];
  readonly queueName: string;
  readonly computeEnvironmentName: string;
  readonly jobDefinition: string;
  /** The played instance's root: its Mountpoint paths are below it. */
  hostRoot(instanceId: string): string;
  /** The played instance's task cgroup, where its agent's guard finds the job containers (a host with an agent). */
  taskCgroup(instanceId: string): string | undefined;
  readonly cliEnv: NodeJS.ProcessEnv;
  readonly workDir: string;
  readonly teardownLog: string;
  readonly onCleanup: (what: string, run: () => Promise<void> | void) => void;
}

/** `mountfleet batch submit --scratch` with the real CLI; resolves to the job id it printed. */
export async function submitWithCli(
  stage: BatchStage,
  name: string,
  command: readonly string[],
  attempts = 1,
): Promise<string> {
  const args = ['batch', 'submit', '--queue', stage.queueName, '--job-definition', stage.jobDefinition];
  args.push('--scratch', '--attempts', String(attempts), '--job-name', name, '--json', '--', ...command);
  const r = await runCli(args, { env: stage.cliEnv });
  if (r.code !== 0)
    throw new Error(`mountfleet ${args.join(' ')} exited ${r.code}:\n${r.stderr.slice(-2000)}`);
  return (JSON.parse(r.stdout) as { jobId: string }).jobId;
}

async function jobDefinitionOf(batch: BatchClient, arn: string): Promise<JobDefinition> {
  const jd = (await batch.send(new DescribeJobDefinitionsCommand({ jobDefinitions: [arn] })))
    .jobDefinitions?.[0];
  if (!jd?.containerProperties) throw new Error(`job definition ${arn} is not known or has no container`);
  return jd;
}

async function fileSystemExists(efs: EFSClient, fileSystemId: string): Promise<boolean> {
  try {
    const fs = (await efs.send(new DescribeFileSystemsCommand({ FileSystemId: fileSystemId }))).FileSystems;
    return (fs?.length ?? 0) > 0;
  } catch (err) {
    if ((err as Error).name === 'FileSystemNotFound') return false;
    throw err;
  }
}

/** A placed job's container, started from its DescribeJobs detail and job definition (as the ECS agent does). */
export async function startJobContainer(
  stage: BatchStage,
  record: BatchAttemptRecord,
  instanceId: string,
): Promise<RunningContainer> {
  const job = (await stage.batch.send(new DescribeJobsCommand({ jobs: [record.jobId] }))).jobs?.[0];
  if (!job?.jobDefinition) throw new Error(`DescribeJobs does not know ${record.jobId}`);
  const jd = await jobDefinitionOf(stage.batch, job.jobDefinition);
  const container = jd.containerProperties!;
  const volumes = new Map((container.volumes ?? []).map((v) => [v.name, v]));
  const binds = [];
  const efs = [];
  for (const m of container.mountPoints ?? []) {
    const v = volumes.get(m.sourceVolume);
    if (v?.host?.sourcePath)
      binds.push({
        hostPath: join(stage.hostRoot(instanceId), v.host.sourcePath),
        containerPath: m.containerPath!,
        readOnly: m.readOnly === true,
      });
    else if (v?.efsVolumeConfiguration?.fileSystemId)
      efs.push({ fileSystemId: v.efsVolumeConfiguration.fileSystemId, containerPath: m.containerPath! });
  }
  record.fileSystemId = efs[0]?.fileSystemId;
  for (const e of efs)
    if (!(await fileSystemExists(stage.efs, e.fileSystemId)))
      throw new Error(`the job's EFS volume ${e.fileSystemId} does not exist: ECS could not mount it`);
  const dir = join(stage.workDir, 'containers', record.jobId);
  mkdirSync(dir, { recursive: true });
  const running = startContainer({
    jobId: record.jobId,
    attempt: 1,
    queueName: stage.queueName,
    computeEnvironmentName: stage.computeEnvironmentName,
    command: job.container?.command ?? container.command ?? [],
    environment: Object.fromEntries(
      (job.container?.environment ?? container.environment ?? []).map((e) => [e.name!, e.value ?? '']),
    ),
    binds,
    efs,
    dir,
    taskCgroup: stage.taskCgroup(instanceId),
  });
  stage.onCleanup(`stop container ${record.jobId}`, () => running.kill());
  return running;
}

/** Records how the job ended, then delivers its "Job State Change" and checks what the teardown left. */
export async function endAndDeliver(
  stage: BatchStage,
  record: BatchAttemptRecord,
  ending?: JobEnding,
): Promise<void> {
  if (ending) stage.scheduler.end(record.jobId, ending);
  const job = await stage.scheduler.waitForEnd(record.jobId);
  record.states = [...job.history];
  record.statusReason = job.statusReason;
  record.exitCode = job.exitCode;
  record.instanceId = job.instanceId;
  const delivery = await deliverJobStateChange(stage.batch, stage.routes, record.jobId, stage.teardownLog);
  record.teardown =
    delivery.results.length === 0
      ? `no rule matched (${delivery.status})`
      : delivery.results.map((r) => r.error ?? r.result);
  if (record.fileSystemId === undefined) {
    // Not started (cancelled): its revision names its file system.
    const detail = (await stage.batch.send(new DescribeJobsCommand({ jobs: [record.jobId] }))).jobs?.[0];
    const jd = detail?.jobDefinition ? await jobDefinitionOf(stage.batch, detail.jobDefinition) : undefined;
    record.fileSystemId = jd?.containerProperties?.volumes?.find((v) => v.efsVolumeConfiguration)
      ?.efsVolumeConfiguration?.fileSystemId;
  }
  if (record.fileSystemId)
    record.fileSystemDeleted = !(await fileSystemExists(stage.efs, record.fileSystemId));
  const detail = (await stage.batch.send(new DescribeJobsCommand({ jobs: [record.jobId] }))).jobs?.[0];
  const revision = detail?.jobDefinition
    ? (await stage.batch.send(new DescribeJobDefinitionsCommand({ jobDefinitions: [detail.jobDefinition] })))
        .jobDefinitions?.[0]
    : undefined;
  record.revisionDeregistered = revision?.status === 'INACTIVE';
}

/** Places the job on the instance, runs its container to its end (or `interrupt`), ends it and delivers. */
export async function runAttempt(
  stage: BatchStage,
  record: BatchAttemptRecord,
  instanceId: string,
  interrupt?: (container: RunningContainer) => Promise<JobEnding>,
): Promise<void> {
  stage.scheduler.place(record.jobId, instanceId);
  let container: RunningContainer;
  try {
    container = await startJobContainer(stage, record, instanceId);
  } catch (err) {
    // As ECS fails a task whose volume cannot be mounted.
    await endAndDeliver(stage, record, {
      statusReason: `ResourceInitializationError: ${(err as Error).message}`,
    });
    return;
  }
  stage.scheduler.running(record.jobId);
  // A job played to its own end gets an empty standard input, as in Batch; one to be interrupted keeps it open.
  if (!interrupt) container.closeInput();
  const ending = interrupt
    ? await interrupt(container)
    : await container.exited.then((code): JobEnding => ({ exitCode: code ?? 137 }));
  await container.exited;
  record.output = container.output().trim().split('\n').slice(-4).join('\n');
  await endAndDeliver(stage, record, ending);
}
