/**
 * A fleet's Batch resources in the emulator, as BatchComputeFleet and its job-definition helper make them: a
 * job queue per zone tagged with the contract (core/contract/batch.ts), a compute environment behind them
 * (UNMANAGED: moto runs no instances for it), the job role, and a job definition that binds the fleet's
 * Mountpoint paths read-only. moto runs Batch jobs only through Docker; `batch.use_docker: false` (its config
 * API) makes it mark every job SUCCEEDED at once instead (docs/sandbox.md, emulator differences).
 */
import {
  CreateComputeEnvironmentCommand,
  CreateJobQueueCommand,
  RegisterJobDefinitionCommand,
  type BatchClient,
} from '@aws-sdk/client-batch';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { BatchFleetSettings } from '../../../core/batch';
import {
  TAG_BATCH_AZ_ID,
  TAG_BATCH_MOUNT_PATHS,
  TAG_BATCH_SCRATCH_SECURITY_GROUP,
  TAG_BATCH_SCRATCH_SUBNET,
  TAG_BATCH_SCRATCH_PATH,
} from '../../../core/contract/batch';
import { TAG_BATCH_SUBMIT_FUNCTION, submitFunctionName } from '../../../core/contract/batch-submit';
import { TAG_FLEET } from '../../../core/contract/tags';
import { createNetwork, type TestNetwork } from '../../support/fixtures';

export const FLEET = 'f1';
export const MOUNT_PATHS = ['/mnt/data', '/mnt/models'];

export interface BatchFleet {
  readonly net: TestNetwork;
  readonly roleArn: string;
  /** Queue of zone 0, with scratch. */
  readonly queue: string;
  readonly queueArn: string;
  /** The fleet's job definition (binds MOUNT_PATHS read-only, job role, scratch path /scratch). */
  readonly jobDefinition: string;
}

/** Tells the emulator to run Batch jobs without Docker (they succeed at once); lasts until the server stops. */
export async function batchWithoutDocker(endpoint: string): Promise<void> {
  const res = await fetch(`${endpoint}/moto-api/config`, {
    method: 'POST',
    body: JSON.stringify({ batch: { use_docker: false } }),
  });
  if (!res.ok) throw new Error(`moto config: ${res.status}`);
}

/** An IAM role in the emulator (the project has no IAM client: one query call, unsigned as moto allows). */
async function createRole(endpoint: string, name: string): Promise<string> {
  const res = await fetch(`${endpoint}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({
      Action: 'CreateRole',
      Version: '2010-05-08',
      RoleName: name,
      AssumeRolePolicyDocument: '{}',
    }).toString(),
  });
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(await res.text())?.[1];
  if (!arn) throw new Error(`CreateRole ${name}: ${res.status}`);
  return arn;
}

/** A job queue of the fleet with the contract's tags (override or drop any through `tags`). */
export async function createQueue(
  batch: BatchClient,
  computeEnvironment: string,
  name: string,
  tags: Record<string, string | undefined>,
): Promise<string> {
  const defined = Object.fromEntries(Object.entries(tags).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
  const q = await batch.send(
    new CreateJobQueueCommand({
      jobQueueName: name,
      state: 'ENABLED',
      priority: 1,
      computeEnvironmentOrder: [{ order: 1, computeEnvironment }],
      tags: defined,
    }),
  );
  return q.jobQueueArn!;
}

/** The fleet's queue tags for zone `zone` of the network. */
export function queueTags(net: TestNetwork, zone = 0): Record<string, string> {
  return {
    [TAG_FLEET]: FLEET,
    [TAG_BATCH_AZ_ID]: net.subnets[zone].availabilityZoneId,
    [TAG_BATCH_MOUNT_PATHS]: MOUNT_PATHS.join(':'),
    [TAG_BATCH_SCRATCH_SUBNET]: net.subnets[zone].subnetId,
    [TAG_BATCH_SCRATCH_SECURITY_GROUP]: net.securityGroupId,
    [TAG_BATCH_SUBMIT_FUNCTION]: submitFunctionName(FLEET),
  };
}

/** A container job definition; `mounts` are the host paths bound read-only (the fleet's by default). */
export async function registerJobDefinition(
  batch: BatchClient,
  name: string,
  options: {
    roleArn?: string;
    mounts?: readonly string[];
    readOnly?: boolean;
    fleetTag?: string | null;
  } = {},
): Promise<string> {
  const mounts = options.mounts ?? MOUNT_PATHS;
  const out = await batch.send(
    new RegisterJobDefinitionCommand({
      jobDefinitionName: name,
      type: 'container',
      containerProperties: {
        image: 'public.ecr.aws/amazonlinux/amazonlinux:2023',
        command: ['true'],
        ...(options.roleArn ? { jobRoleArn: options.roleArn } : {}),
        resourceRequirements: [
          { type: 'VCPU', value: '1' },
          { type: 'MEMORY', value: '512' },
        ],
        volumes: mounts.map((path, i) => ({ name: `mount${i}`, host: { sourcePath: path } })),
        mountPoints: mounts.map((path, i) => ({
          sourceVolume: `mount${i}`,
          containerPath: path,
          readOnly: options.readOnly ?? true,
        })),
      },
      tags: {
        ...(options.fleetTag === null ? {} : { [TAG_FLEET]: options.fleetTag ?? FLEET }),
        [TAG_BATCH_SCRATCH_PATH]: '/scratch',
      },
    }),
  );
  return out.jobDefinitionArn!;
}

/** The network, the job role, a compute environment, the zone-0 queue and the fleet's job definition. */
export async function createBatchFleet(
  endpoint: string,
  batch: BatchClient,
  ec2: EC2Client,
): Promise<BatchFleet & { readonly computeEnvironment: string }> {
  await batchWithoutDocker(endpoint);
  const net = await createNetwork(ec2, 2);
  const roleArn = await createRole(endpoint, 'f1-job-role');
  const ce = await batch.send(
    new CreateComputeEnvironmentCommand({
      computeEnvironmentName: 'f1-ce',
      type: 'UNMANAGED',
      state: 'ENABLED',
      serviceRole: roleArn,
    }),
  );
  const computeEnvironment = ce.computeEnvironmentArn!;
  const queueArn = await createQueue(batch, computeEnvironment, 'f1-az0', queueTags(net, 0));
  await registerJobDefinition(batch, 'f1-job', { roleArn });
  return { net, roleArn, queue: 'f1-az0', queueArn, jobDefinition: 'f1-job', computeEnvironment };
}

/** The fleet as its Batch functions know it from their environment (BATCH_FUNCTION_ENV). */
export function fleetSettings(fleet: BatchFleet): BatchFleetSettings {
  return { fleetId: FLEET, queueArns: [fleet.queueArn], mountPaths: MOUNT_PATHS, jobRoleArn: fleet.roleArn };
}
