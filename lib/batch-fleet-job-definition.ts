import { ArnFormat, type Duration, Names, Size, Stack, Token } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  DEFAULT_BATCH_SCRATCH_PATH,
  TAG_BATCH_SCRATCH_PATH,
  TAG_FLEET,
  runJobDefinitionPrefix,
} from '../core/contract';
import type { BatchComputeFleet } from './batch-compute-fleet';
import { acknowledgeWildcardResource } from './private/nag';
import { invalidProp, validateMountPath } from './private/validation';

/** Props of {@link FleetJobDefinition}. */
export interface FleetJobDefinitionProps {
  /** The fleet whose queues run the job: its Mountpoint paths are bound in and its job role is the job's. */
  readonly fleet: BatchComputeFleet;
  /** The container image, e.g. `public.ecr.aws/docker/library/python:3.12` (any image: no mountfleet inside). */
  readonly image: string;
  /** The command. @default - the image's */
  readonly command?: string[];
  /** vCPUs the job reserves. @default 1 */
  readonly vcpus?: number;
  /** Memory the job reserves. @default Size.gibibytes(2) */
  readonly memory?: Size;
  /** Environment variables of the container. @default - none */
  readonly environment?: Record<string, string>;
  /**
   * Where the job's scratch appears in the container when it is submitted with `mountfleet batch submit --scratch`
   * (tag `mountfleet:scratch-path`). @default '/scratch'
   */
  readonly scratchPath?: string;
  /** Attempts Batch makes (1-10; a retry gets a scratch file system of its own). @default 1 */
  readonly retryAttempts?: number;
  /** How long an attempt may run before Batch stops it. @default - no timeout */
  readonly timeout?: Duration;
  /** The job-definition name. @default - a name unique to this construct */
  readonly jobDefinitionName?: string;
}

/**
 * A job definition for a {@link BatchComputeFleet}: an ECS container job that binds every Mountpoint path of the
 * fleet into the container read-only (host volumes at the same path), runs with the fleet's job role, is never
 * privileged, and carries the fleet and scratch-path tags that `mountfleet batch submit` reads.
 */
export class FleetJobDefinition extends Construct {
  /** The job definition's name. */
  readonly jobDefinitionName: string;
  /** The ARN of the revision this deploy registered. */
  readonly jobDefinitionArn: string;
  /** The container path of the job's scratch. */
  readonly scratchPath: string;
  private readonly fleet: BatchComputeFleet;

  constructor(scope: Construct, id: string, props: FleetJobDefinitionProps) {
    super(scope, id);
    const { fleet } = props;
    this.fleet = fleet;
    this.scratchPath = props.scratchPath ?? DEFAULT_BATCH_SCRATCH_PATH;
    validateMountPath(this, 'scratchPath', this.scratchPath);
    if (fleet.mountPaths.includes(this.scratchPath)) {
      invalidProp(
        this,
        'scratchPath',
        `${this.scratchPath} is a Mountpoint path of the fleet`,
        'pick another',
      );
    }
    const attempts = props.retryAttempts ?? 1;
    if (!Token.isUnresolved(attempts) && (!Number.isInteger(attempts) || attempts < 1 || attempts > 10)) {
      invalidProp(this, 'retryAttempts', `${attempts} is not from 1 to 10`, 'Batch makes 1 to 10 attempts');
    }
    this.jobDefinitionName =
      props.jobDefinitionName ?? Names.uniqueResourceName(this, { maxLength: 128, separator: '-' });
    if (
      !Token.isUnresolved(this.jobDefinitionName) &&
      (!/^[A-Za-z0-9_-]{1,128}$/.test(this.jobDefinitionName) ||
        this.jobDefinitionName.startsWith(runJobDefinitionPrefix(fleet.fleetId)))
    ) {
      invalidProp(
        this,
        'jobDefinitionName',
        `"${this.jobDefinitionName}" is not 1-128 letters, digits, - and _, or starts with ${runJobDefinitionPrefix(fleet.fleetId)} (the per-run definitions' prefix)`,
        'for example "encode"',
      );
    }
    const volumes = fleet.mountPaths.map((path, i) => ({
      name: `mountfleet-mount-${i}`,
      host: { sourcePath: path },
    }));
    const resource = new batch.CfnJobDefinition(this, 'Resource', {
      type: 'container',
      jobDefinitionName: this.jobDefinitionName,
      platformCapabilities: ['EC2'],
      retryStrategy: { attempts },
      timeout: props.timeout ? { attemptDurationSeconds: props.timeout.toSeconds() } : undefined,
      containerProperties: {
        image: props.image,
        command: props.command,
        jobRoleArn: fleet.jobRole.roleArn,
        privileged: false,
        resourceRequirements: [
          { type: 'VCPU', value: String(props.vcpus ?? 1) },
          { type: 'MEMORY', value: String((props.memory ?? Size.gibibytes(2)).toMebibytes()) },
        ],
        environment: Object.entries(props.environment ?? {}).map(([name, value]) => ({ name, value })),
        volumes,
        mountPoints: volumes.map((v) => ({
          sourceVolume: v.name,
          containerPath: v.host.sourcePath,
          readOnly: true,
        })),
      },
      tags: { [TAG_FLEET]: fleet.fleetId, [TAG_BATCH_SCRATCH_PATH]: this.scratchPath },
    });
    this.jobDefinitionArn = resource.ref;
  }

  /** Grants SubmitJob of any revision of this definition to the fleet's queues (a plain `aws batch submit-job`). */
  grantSubmitJob(grantee: iam.IGrantable): iam.Grant {
    const revisions = Stack.of(this).formatArn({
      service: 'batch',
      resource: 'job-definition',
      resourceName: `${this.jobDefinitionName}:*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    acknowledgeWildcardResource(
      grantee.grantPrincipal,
      revisions,
      'SubmitJob authorizes the job definition with its revision in the ARN; the wildcard is the revision of this one definition only.',
    );
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['batch:SubmitJob'],
      resourceArns: [...this.fleet.jobQueueArns, revisions],
    });
  }
}
