/**
 * Job definitions: reading the one a job is submitted with, checking it binds the fleet's Mountpoint paths,
 * and the per-run revision `mf-<fleet>-<run>` that adds the run's EFS volume (a submission cannot override a
 * job definition's volumes, and an EFS volume needs a fixed file system id: hence one revision per run).
 */
import {
  DeregisterJobDefinitionCommand,
  DescribeJobDefinitionsCommand,
  RegisterJobDefinitionCommand,
  type BatchClient,
  type ContainerProperties,
  type JobDefinition,
  type RegisterJobDefinitionCommandInput,
} from '@aws-sdk/client-batch';
import { UsageError } from '../common';
import {
  DEFAULT_BATCH_SCRATCH_PATH,
  TAG_BATCH_SCRATCH_PATH,
  runJobDefinitionName,
  runJobDefinitionPrefix,
} from '../contract';
import { allowedContainer, hostAccessProblems } from './host-access';
import type { BatchFleetSettings } from './settings';

/** The name of the EFS volume a run's revision adds (replaced, not doubled, when a retry copies a revision). */
export const SCRATCH_VOLUME_NAME = 'mountfleet-scratch';

/** Name, `name:revision` or ARN: the latest ACTIVE revision for a bare name. */
export async function describeJobDefinition(
  batch: BatchClient,
  ref: string,
  signal?: AbortSignal,
): Promise<JobDefinition | undefined> {
  const named = ref.startsWith('arn:') || /:\d+$/.test(ref);
  const out = await batch.send(
    new DescribeJobDefinitionsCommand(
      named ? { jobDefinitions: [ref] } : { jobDefinitionName: ref, status: 'ACTIVE' },
    ),
    { abortSignal: signal },
  );
  const found = out.jobDefinitions ?? [];
  return found.sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0))[0];
}

/**
 * The job definition a job is submitted with, checked: it exists and is ACTIVE, is not one of the fleet's per-run
 * revisions, asks nothing of the host the fleet does not allow (host-access.ts) and binds each of the fleet's
 * Mountpoint paths read-only; otherwise a UsageError naming `--job-definition` and every problem. Revisions are
 * immutable, so the one checked here (its ARN names the revision) is the one that runs.
 */
export async function readBaseJobDefinition(
  batch: BatchClient,
  ref: string,
  settings: BatchFleetSettings,
  signal?: AbortSignal,
): Promise<CheckedJobDefinition> {
  const flag = `--job-definition ${ref}`;
  const jd = await describeJobDefinition(batch, ref, signal);
  if (jd?.jobDefinitionArn === undefined || jd.status !== 'ACTIVE') {
    throw new UsageError(
      `${flag}: no ACTIVE job definition of that name, revision or ARN: register one (the fleet's job-definition helper ` +
        'makes one with its mounts) and pass its name; `aws batch describe-job-definitions --status ACTIVE` lists them',
    );
  }
  if (jd.jobDefinitionName?.startsWith(runJobDefinitionPrefix(settings.fleetId))) {
    throw new UsageError(
      `${flag}: this is the revision of one earlier run (${jd.jobDefinitionName}), deregistered when that run ends: pass the job definition it was made from`,
    );
  }
  const problems = hostAccessProblems(jd, settings);
  if (problems.length > 0) {
    throw new UsageError(
      `${flag}: refused, it asks more of the fleet's hosts than a job may have (nothing was created):\n` +
        problems.map((p) => `  ${p}`).join('\n'),
    );
  }
  const container = jd.containerProperties!;
  const mounts = mountsProblem(container, settings.mountPaths);
  if (mounts) throw new UsageError(`${flag}: ${mounts}`);
  return { ...jd, jobDefinitionArn: jd.jobDefinitionArn, containerProperties: container };
}

/** A base job definition that passed readBaseJobDefinition's checks. */
export type CheckedJobDefinition = JobDefinition & {
  readonly jobDefinitionArn: string;
  readonly containerProperties: ContainerProperties;
};

/**
 * What is wrong with the job definition's mounts, or undefined: every one of the queue's Mountpoint paths must
 * be a host volume mounted read-only into the container ("a job definition without the fleet's mounts").
 */
export function mountsProblem(
  container: ContainerProperties,
  mountPaths: readonly string[],
): string | undefined {
  const missing = mountPaths.filter((path) => {
    const volumes = (container.volumes ?? []).filter((v) => v.host?.sourcePath === path).map((v) => v.name);
    return !(container.mountPoints ?? []).some(
      (m) => volumes.includes(m.sourceVolume) && m.readOnly === true,
    );
  });
  if (missing.length === 0) return undefined;
  return (
    `binds ${missing.length === mountPaths.length ? 'none' : 'not all'} of the fleet's Mountpoint paths read-only ` +
    `(missing: ${missing.join(', ')}): a job definition without the fleet's mounts would not see its data; add a host ` +
    "volume and a read-only mount point for each (the fleet's job-definition helper does)"
  );
}

/** Where the job sees its scratch: the job definition's `mountfleet:scratch-path` tag, else /scratch. */
export function scratchPathOf(jd: JobDefinition): string {
  return jd.tags?.[TAG_BATCH_SCRATCH_PATH] ?? DEFAULT_BATCH_SCRATCH_PATH;
}

interface RunRevisionSpec {
  readonly fleetId: string;
  readonly runId: string;
  readonly fileSystemId: string;
  readonly scratchPath: string;
  /** Tags of the run (BATCH_RUN_TAG_KEYS). */
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * The run's revision: the base's container properties with the run's EFS volume (TLS and IAM authorization,
 * with the job role) at the scratch path, one attempt (a retry is a new run), the base's timeout and
 * platform, the run's tags.
 */
export function runRevision(base: JobDefinition, spec: RunRevisionSpec): RegisterJobDefinitionCommandInput {
  const container = allowedContainer(base.containerProperties ?? {});
  const volumes = (container.volumes ?? []).filter((v) => v.name !== SCRATCH_VOLUME_NAME);
  const mountPoints = (container.mountPoints ?? []).filter((m) => m.sourceVolume !== SCRATCH_VOLUME_NAME);
  return {
    jobDefinitionName: runJobDefinitionName(spec.fleetId, spec.runId),
    type: 'container',
    parameters: base.parameters,
    timeout: base.timeout,
    platformCapabilities: base.platformCapabilities,
    propagateTags: true,
    retryStrategy: { attempts: 1 },
    containerProperties: {
      ...container,
      volumes: [
        ...volumes,
        {
          name: SCRATCH_VOLUME_NAME,
          efsVolumeConfiguration: {
            fileSystemId: spec.fileSystemId,
            transitEncryption: 'ENABLED',
            authorizationConfig: { iam: 'ENABLED' },
          },
        },
      ],
      mountPoints: [
        ...mountPoints,
        { sourceVolume: SCRATCH_VOLUME_NAME, containerPath: spec.scratchPath, readOnly: false },
      ],
    },
    tags: { ...spec.tags },
  };
}

/**
 * What keeps the base from carrying a run's scratch, or undefined: EFS IAM authorization mounts with the job
 * role, so one is needed; the scratch path must not be a mount point the job already has.
 */
export function scratchProblem(container: ContainerProperties, scratchPath: string): string | undefined {
  if (!container.jobRoleArn) {
    return "has no jobRoleArn: the scratch volume is mounted with the job role (EFS IAM authorization); give it the fleet's job role";
  }
  const taken = (container.mountPoints ?? []).find((m) => m.containerPath === scratchPath);
  if (taken && taken.sourceVolume !== SCRATCH_VOLUME_NAME) {
    return `already mounts volume ${taken.sourceVolume} at the scratch path ${scratchPath}: tag it ${TAG_BATCH_SCRATCH_PATH} with another path`;
  }
  return undefined;
}

/** A run's revision without the run's own scratch volume and mount point: the base it was made from. */
export function withoutRunScratch(revision: JobDefinition): JobDefinition {
  const container = revision.containerProperties ?? {};
  return {
    ...revision,
    containerProperties: {
      ...container,
      volumes: (container.volumes ?? []).filter((v) => v.name !== SCRATCH_VOLUME_NAME),
      mountPoints: (container.mountPoints ?? []).filter((m) => m.sourceVolume !== SCRATCH_VOLUME_NAME),
    },
  };
}

/** Deregisters a run's revision; one already INACTIVE (an earlier teardown's work) is left as it is. */
export async function deregisterRevision(
  batch: BatchClient,
  arn: string,
  signal?: AbortSignal,
): Promise<'deregistered' | 'already-inactive'> {
  const jd = await describeJobDefinition(batch, arn, signal);
  if (jd === undefined || jd.status !== 'ACTIVE') return 'already-inactive';
  await batch.send(new DeregisterJobDefinitionCommand({ jobDefinition: arn }), { abortSignal: signal });
  return 'deregistered';
}

/** Registers a run's revision; resolves to its ARN. */
export async function registerRevision(
  batch: BatchClient,
  revision: RegisterJobDefinitionCommandInput,
  signal?: AbortSignal,
): Promise<string> {
  const out = await batch.send(new RegisterJobDefinitionCommand(revision), { abortSignal: signal });
  return out.jobDefinitionArn!;
}

/** The ARNs of the ACTIVE revisions of a job-definition name (a run's: one, unless a lost answer made two). */
export async function activeRevisions(
  batch: BatchClient,
  name: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const out = await batch.send(
    new DescribeJobDefinitionsCommand({ jobDefinitionName: name, status: 'ACTIVE' }),
    {
      abortSignal: signal,
    },
  );
  return (out.jobDefinitions ?? []).flatMap((jd) => (jd.jobDefinitionArn ? [jd.jobDefinitionArn] : []));
}
