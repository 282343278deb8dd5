/**
 * What a job definition may ask of a fleet's host. IAM cannot see a job definition's volumes, mount points,
 * devices or Linux parameters (RegisterJobDefinition evaluates only batch:Privileged, batch:User, batch:Image,
 * batch:LogDriver and batch:AWSLogs* among them, Service Authorization Reference), so the submit function checks
 * each base definition here before anything is created, and builds a run's revision from the checked fields only.
 *
 * Allowed: host volumes at the fleet's Mountpoint paths only, each mounted read-only; no EFS volume of its own (a
 * run's scratch is added by the function); not privileged; no devices; the fleet's job role (or none) as job and
 * execution role; an ECS-on-EC2 container job. Every field not named here is refused, so a field Batch adds later
 * is refused until it is checked, never passed on unseen.
 */
import type { ContainerProperties, JobDefinition } from '@aws-sdk/client-batch';
import { withoutTrailingSlash } from '../common';

/** The fleet a base definition is checked against. */
export interface HostAccessRules {
  /** The fleet's Mountpoint paths: the only host paths a job may bind, and only read-only. */
  readonly mountPaths: readonly string[];
  /** The fleet's job role: the only role a job may run as (job role and execution role). */
  readonly jobRoleArn: string;
}

/** Container fields that ask nothing of the host beyond the container itself. */
const PLAIN_CONTAINER_FIELDS = [
  'image',
  'vcpus',
  'memory',
  'command',
  'environment',
  'readonlyRootFilesystem',
  'ulimits',
  'user',
  'resourceRequirements',
  'logConfiguration',
  'secrets',
  'repositoryCredentials',
  'enableExecuteCommand',
] as const;
/** Container fields checked below. */
const CHECKED_CONTAINER_FIELDS = [
  'jobRoleArn',
  'executionRoleArn',
  'volumes',
  'mountPoints',
  'privileged',
  'linuxParameters',
] as const;
/** Fargate's fields: this fleet runs jobs on EC2 (ECS) instances. */
const FARGATE_FIELDS = [
  'networkConfiguration',
  'fargatePlatformConfiguration',
  'ephemeralStorage',
  'runtimePlatform',
];
/** Linux parameters that stay inside the container; `devices` is the one that reaches the host. */
const PLAIN_LINUX_FIELDS = ['initProcessEnabled', 'sharedMemorySize', 'tmpfs', 'maxSwap', 'swappiness'];

/** The fields a run's revision copies from a checked base: every allowed one. */
export const ALLOWED_CONTAINER_FIELDS: readonly string[] = [
  ...PLAIN_CONTAINER_FIELDS,
  ...CHECKED_CONTAINER_FIELDS,
];

type Problems = string[];

/** Each thing the definition asks of the host that it may not, as `field: problem` (empty when it is fine). */
export function hostAccessProblems(jd: JobDefinition, rules: HostAccessRules): string[] {
  const problems: Problems = [];
  for (const field of ['nodeProperties', 'eksProperties', 'ecsProperties'] as const) {
    if (jd[field] !== undefined) {
      problems.push(`${field}: mountfleet submits single-container ECS jobs (containerProperties) only`);
    }
  }
  if ((jd.platformCapabilities ?? []).some((p) => p !== 'EC2')) {
    problems.push(
      `platformCapabilities ${jd.platformCapabilities!.join(',')}: the fleet runs jobs on EC2 instances; use EC2`,
    );
  }
  const container = jd.containerProperties;
  if (container === undefined) {
    problems.push('containerProperties: missing (a container job definition is needed)');
    return problems;
  }
  containerFieldProblems(container, problems);
  roleProblems(container, rules, problems);
  volumeProblems(container, rules, problems);
  if (container.privileged === true) {
    problems.push('containerProperties.privileged: a privileged container owns the host; remove it');
  }
  linuxProblems(container, problems);
  return problems;
}

function containerFieldProblems(container: ContainerProperties, problems: Problems): void {
  for (const [field, value] of Object.entries(container)) {
    if (value === undefined || ALLOWED_CONTAINER_FIELDS.includes(field)) continue;
    problems.push(
      FARGATE_FIELDS.includes(field)
        ? `containerProperties.${field}: a Fargate setting; the fleet runs jobs on EC2 instances`
        : `containerProperties.${field}: not a field mountfleet checks, so it is refused (it may give the job more of the host)`,
    );
  }
}

function roleProblems(container: ContainerProperties, rules: HostAccessRules, problems: Problems): void {
  for (const field of ['jobRoleArn', 'executionRoleArn'] as const) {
    const arn = container[field];
    if (arn !== undefined && arn !== rules.jobRoleArn) {
      problems.push(
        `containerProperties.${field} ${arn}: jobs of this fleet run as its job role ${rules.jobRoleArn} (or none); ` +
          'give that role what the job needs',
      );
    }
  }
}

/** Host volumes at the fleet's paths, mounted read-only wherever they are mounted; no volume of another kind. */
function volumeProblems(container: ContainerProperties, rules: HostAccessRules, problems: Problems): void {
  const fleetPaths = rules.mountPaths.map(withoutTrailingSlash);
  const declared = new Set<string>();
  (container.volumes ?? []).forEach((volume, i) => {
    const at = `containerProperties.volumes[${i}]`;
    if (volume.name) declared.add(volume.name);
    if (volume.efsVolumeConfiguration !== undefined) {
      problems.push(
        `${at} (${volume.name}): an EFS volume; a job's scratch is made by the fleet per run (--scratch), ` +
          'and no job may mount another file system',
      );
    } else if (volume.host?.sourcePath === undefined) {
      problems.push(
        `${at} (${volume.name}): a Docker volume on the host; only the fleet's Mountpoint paths may be bound`,
      );
    } else if (!fleetPaths.includes(withoutTrailingSlash(volume.host.sourcePath))) {
      problems.push(
        `${at}.host.sourcePath ${volume.host.sourcePath}: not one of the fleet's Mountpoint paths ` +
          `(${fleetPaths.join(', ') || 'it has none'}); a job may bind only those, read-only`,
      );
    }
  });
  (container.mountPoints ?? []).forEach((mount, i) => {
    const at = `containerProperties.mountPoints[${i}]`;
    if (mount.sourceVolume === undefined || !declared.has(mount.sourceVolume)) {
      problems.push(`${at}.sourceVolume ${mount.sourceVolume}: no volume of that name`);
    } else if (mount.readOnly !== true) {
      problems.push(
        `${at} (${mount.sourceVolume} at ${mount.containerPath}): must be readOnly: a job writes through ` +
          'scratch or its own S3 calls, never into the host',
      );
    }
  });
}

function linuxProblems(container: ContainerProperties, problems: Problems): void {
  const linux = container.linuxParameters;
  if (linux === undefined) return;
  if ((linux.devices ?? []).length > 0) {
    problems.push(
      `containerProperties.linuxParameters.devices (${linux.devices!.map((d) => d.hostPath).join(', ')}): ` +
        'a host device gives the job the host; remove it',
    );
  }
  for (const [field, value] of Object.entries(linux)) {
    if (value !== undefined && field !== 'devices' && !PLAIN_LINUX_FIELDS.includes(field)) {
      problems.push(
        `containerProperties.linuxParameters.${field}: not a field mountfleet checks, so it is refused`,
      );
    }
  }
}

/** The checked base's container with only the allowed fields (what a run's revision is built from). */
export function allowedContainer(container: ContainerProperties): ContainerProperties {
  return Object.fromEntries(
    Object.entries(container).filter(([field]) => ALLOWED_CONTAINER_FIELDS.includes(field)),
  ) as ContainerProperties;
}
