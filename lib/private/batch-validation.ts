/**
 * BatchComputeFleet's own checks at synth (the shared ones are fleet-instances.ts's): vCPU bounds, the job-queue
 * tags' length and characters, and the ECS-optimized AMI that fits the instance types.
 */
import { Token } from 'aws-cdk-lib';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import type { IConstruct } from 'constructs';
import { TAG_BATCH_MOUNT_PATHS } from '../../core/contract';
import { invalidProp } from './validation';

/** The vCPU bounds of each zone's compute environments. */
interface ZoneVcpus {
  readonly spot: number;
  readonly onDemand: number;
  readonly min: number;
}

/** Throws naming the prop when a bound is no whole number, there is no capacity, or the minimum exceeds it. */
export function validateVcpus(scope: IConstruct, vcpus: ZoneVcpus): ZoneVcpus {
  const fields: Array<[string, number]> = [
    ['spotMaxvCpus', vcpus.spot],
    ['onDemandMaxvCpus', vcpus.onDemand],
    ['minvCpus', vcpus.min],
  ];
  for (const [field, value] of fields) {
    if (Token.isUnresolved(value)) invalidProp(scope, field, 'must be a number, not a token');
    if (!Number.isInteger(value) || value < 0) {
      invalidProp(scope, field, `${value} is not a whole number of vCPUs`, 'use 0 or more');
    }
  }
  if (vcpus.spot === 0 && vcpus.onDemand === 0) {
    invalidProp(
      scope,
      'spotMaxvCpus',
      'and onDemandMaxvCpus are both 0: no compute environment could run a job',
      'give one of them a number of vCPUs',
    );
  }
  const first = vcpus.spot > 0 ? vcpus.spot : vcpus.onDemand;
  if (vcpus.min > first) {
    invalidProp(
      scope,
      'minvCpus',
      `${vcpus.min} is above the first environment's maximum ${first}`,
      'lower it',
    );
  }
  return vcpus;
}

/** Characters AWS allows in tag values (letters, digits, spaces and `_ . : / = + - @`). */
const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const MAX_TAG_VALUE = 256;

/** The mount paths' tag (`mountfleet:mount-paths`, paths joined by ':') must be a valid tag value. */
export function validateQueueTags(scope: IConstruct, mountPathsTag: string): void {
  if (mountPathsTag.length > MAX_TAG_VALUE) {
    invalidProp(
      scope,
      'mounts',
      `the mount paths joined by ':' are ${mountPathsTag.length} characters, more than the ${MAX_TAG_VALUE} a tag value (${TAG_BATCH_MOUNT_PATHS} on each job queue) holds`,
      'use fewer or shorter mount paths',
    );
  }
  if (!TAG_VALUE.test(mountPathsTag)) {
    invalidProp(
      scope,
      'mounts',
      `the mount paths (${mountPathsTag}) have a character a tag value (${TAG_BATCH_MOUNT_PATHS}) cannot hold`,
      'use letters, digits and _ . / = + - @ in mount paths',
    );
  }
}

/** The ECS-optimized AMI variant: arm64 (Graviton), GPU (g and p families, NVIDIA drivers) or standard. */
export function batchHardwareType(
  architecture: 'arm64' | 'x86_64',
  instanceTypes: readonly string[],
): ecs.AmiHardwareType {
  if (architecture === 'arm64') return ecs.AmiHardwareType.ARM;
  return instanceTypes.some((t) => /^[gp]\d/.test(t))
    ? ecs.AmiHardwareType.GPU
    : ecs.AmiHardwareType.STANDARD;
}
