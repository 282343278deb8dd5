/**
 * STAND-IN for the container the ECS agent starts for a Batch job: the shared container stand-in
 * (test/support/container-standin.ts: the host volumes bound as Docker binds them, recursively and rprivate at
 * start; its EFS volumes through the EFS mount helper stand-in; a root of its own), with what Batch adds:
 * AWS_BATCH_JOB_ID, AWS_BATCH_JOB_ATTEMPT, AWS_BATCH_JQ_NAME, AWS_BATCH_CE_NAME, then the job's environment.
 * The command must not start with a NAME=VALUE word (`env` would take it for a variable).
 * As on ECS, a mount made on the host later is not seen inside. Stopping it kills the namespace (its PID 1 and
 * every process in it) like a lost instance.
 * Standard input: a Batch container's is empty (end of file at once; `closeInput()` gives that). Until then it is
 * a pipe the sandbox holds open and never writes to, so a job that reads it blocks until its instance goes
 * away: how the sandbox keeps a job running until it takes the instance from under it, whatever the machine's
 * speed (no sleep to outlast).
 */
import {
  startContainerStandIn,
  type ContainerStandIn,
  type HostBind,
} from '../../test/support/container-standin';

export interface ContainerSpec {
  readonly jobId: string;
  /** Batch's attempt number of this job (each mountfleet attempt is a Batch job of its own: 1). */
  readonly attempt: number;
  readonly queueName: string;
  readonly computeEnvironmentName: string;
  readonly command: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly binds: readonly HostBind[];
  /** EFS volumes: the file system and where the container sees it. */
  readonly efs: readonly { readonly fileSystemId: string; readonly containerPath: string }[];
  /** A directory of the sandbox's work directory for this container's root and mount log. */
  readonly dir: string;
  /** The played instance's task cgroup (a cgroup v2 directory), where its mount agent's guard looks for jobs. */
  readonly taskCgroup?: string;
}

export type RunningContainer = Pick<
  ContainerStandIn,
  'exited' | 'emptied' | 'output' | 'stderr' | 'signal' | 'kill' | 'closeInput'
>;

/** Starts the job's container; it runs until its command exits or `kill()`. */
export function startContainer(spec: ContainerSpec): RunningContainer {
  return startContainerStandIn({
    name: spec.jobId.replace(/[^A-Za-z0-9_-]/g, '-'),
    command: spec.command,
    environment: {
      AWS_BATCH_JOB_ID: spec.jobId,
      AWS_BATCH_JOB_ATTEMPT: String(spec.attempt),
      AWS_BATCH_JQ_NAME: spec.queueName,
      AWS_BATCH_CE_NAME: spec.computeEnvironmentName,
      ...spec.environment,
    },
    binds: spec.binds,
    efs: spec.efs,
    dir: spec.dir,
    ...(spec.taskCgroup ? { taskCgroup: spec.taskCgroup } : {}),
  });
}
