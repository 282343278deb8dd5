/**
 * The instances of a fleet, whoever launches them (ComputeFleet's Auto Scaling group, BatchComputeFleet's compute
 * environments): the checked props, the security group, the role and its grants, the metrics log group, agent.json
 * and the launch template. Each construct adds only what its launcher needs (user data wrapping, hop limit, hook).
 */
import { RemovalPolicy, Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import {
  AGENT_CONFIG_VERSION,
  MOUNTPOINT_DEFAULT_VERSION,
  agentMetricsLogGroupName,
  cacheUsesExpress,
  defaultCachePolicy,
  type AgentConfigInput,
  type CachePolicy,
} from '../../core/contract';
import type { FleetInstancesProps } from '../fleet-instances-props';
import type { FleetMount } from '../interfaces';
import { renderAgentConfig } from './agent-config';
import { grantAgentBasics, grantFleetMetrics } from './fleet-grants';
import { architectureOf, chooseZones } from './fleet-placement';
import { grantBucketMount } from './mount-grants';
import { acknowledge } from './nag';
import { invalidProp, validateFleetId, validateMountPath, validateMountPrefix } from './validation';

export const DEFAULT_INSTANCE_TYPES = ['m6i.large', 'm6a.large', 'm5.large', 'm7i.large'];

/** The props, checked: mounts with their default cache, the zones and the one architecture. */
interface CheckedFleet {
  readonly mounts: FleetMount[];
  readonly defaultCache: CachePolicy;
  readonly azIds: string[];
  readonly architecture: 'arm64' | 'x86_64';
}

/** Checks the shared props (throws naming the prop) and chooses the zones. */
export function checkFleetProps(scope: Construct, props: FleetInstancesProps): CheckedFleet {
  validateFleetId(scope, props.fleetId);
  const mounts = props.mounts ?? [];
  const defaultCache = defaultCachePolicy(props.expressCache !== undefined);
  mounts.forEach((m, i) => {
    validateMountPath(scope, `mounts[${i}].path`, m.path);
    // The prefix becomes the instance role's grant on `bucket/<prefix>*`.
    validateMountPrefix(scope, `mounts[${i}].prefix`, m.prefix ?? '');
    if (cacheUsesExpress(m.cache ?? defaultCache) && !props.expressCache) {
      invalidProp(
        scope,
        `mounts[${i}].cache`,
        `"${m.cache}" needs an Express cache`,
        'pass expressCache or use cache "local"',
      );
    }
  });
  if (props.scratch && props.scratch.fleetId !== props.fleetId) {
    invalidProp(
      scope,
      'scratch',
      `${props.scratch.node.path} is for fleet "${props.scratch.fleetId}", this fleet is "${props.fleetId}"`,
      "give both the same fleetId (the scratch IAM keys on it: the agent's requests would be denied at run time)",
    );
  }
  const azIds = chooseZones(scope, {
    network: props.network,
    azIds: props.azIds,
    expressCache: props.expressCache,
    scratch: props.scratch,
  });
  const architecture = architectureOf(scope, props.instanceTypes ?? DEFAULT_INSTANCE_TYPES);
  return { mounts, defaultCache, azIds, architecture };
}

/** The instances' security group: the given one, or `SecurityGroup` with no ingress and all outbound. */
export function fleetSecurityGroup(scope: Construct, props: FleetInstancesProps): ec2.ISecurityGroup {
  return (
    props.securityGroup ??
    new ec2.SecurityGroup(scope, 'SecurityGroup', {
      vpc: props.network.vpc,
      description: `mountfleet fleet ${props.fleetId}: no inbound, all outbound (S3, package repositories)`,
      allowAllOutbound: true,
    })
  );
}

/** The instances' role `Role` (EC2 trust), with Session Manager unless turned off. */
export function fleetRole(scope: Construct, props: FleetInstancesProps): iam.Role {
  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
    description: `mountfleet fleet ${props.fleetId} instances`,
  });
  if (props.sessionManager ?? true) {
    role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore'));
    acknowledge(
      role,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
      "Session Manager is how operators reach fleet instances (no SSH, no inbound rule); AWS maintains this policy's list of SSM agent calls, which a copy would let go stale. sessionManager: false leaves it out.",
    );
  }
  return role;
}

/**
 * What the instances reach and whom: mounts, cache, scratch, basics; and the metrics log group `MetricsLogGroup`.
 * A Batch host (`batchHost`) reaches the scratch mount targets (ECS mounts a job's EFS volume from the host, as the
 * job role) but may not create, tag or delete scratch: the submit function makes a job's file system.
 */
export function grantFleetInstances(
  scope: Construct & ec2.IConnectable,
  role: iam.Role,
  props: FleetInstancesProps,
  options: { readonly mounts: FleetMount[]; readonly terminationHook: boolean; readonly batchHost: boolean },
): logs.LogGroup {
  options.mounts.forEach((m) => {
    grantBucketMount(scope, role, {
      bucket: m.bucket,
      prefix: m.prefix ?? '',
      access: m.access ?? 'read-only',
      dataset: m.dataset ?? 'mutable',
      description: m.path,
    });
  });
  props.expressCache?.grantMountpointCache(role);
  if (props.scratch) {
    props.scratch.allowMountsFrom(scope);
    if (!options.batchHost) props.scratch.grantCreateAndDelete(role);
  }
  grantAgentBasics(role, props.fleetId, { terminationHook: options.terminationHook });
  const metricsLogGroup = new logs.LogGroup(scope, 'MetricsLogGroup', {
    logGroupName: agentMetricsLogGroupName(props.fleetId),
    retention: props.metricsLogRetention ?? logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  grantFleetMetrics(role, metricsLogGroup);
  return metricsLogGroup;
}

/**
 * agent.json of the fleet, checked with the agent's schema and rendered as a deploy-time JSON string. A Batch host
 * (`batchHost`) gets `containers` (its jobs run in the ECS agent's containers, with the contract's defaults) and
 * no `scratch`: it creates none, the submit function does.
 */
export function fleetAgentConfigJson(
  scope: Construct,
  props: FleetInstancesProps,
  fleet: CheckedFleet & { readonly lifecycleHookName?: string; readonly batchHost: boolean },
): string {
  const config: AgentConfigInput = {
    version: AGENT_CONFIG_VERSION,
    fleetId: props.fleetId,
    region: Stack.of(scope).region,
    mounts: fleet.mounts.map((m) => ({
      bucket: m.bucket.bucketName,
      prefix: m.prefix ?? '',
      path: m.path,
      access: m.access ?? 'read-only',
      dataset: m.dataset ?? 'mutable',
      cache: m.cache ?? fleet.defaultCache,
      // Mountpoint refuses a bucket of another owner (a deleted name re-created elsewhere); a token resolves at deploy.
      expectedBucketOwner: m.bucket.env.account,
    })),
    ...(fleet.lifecycleHookName ? { lifecycleHook: { name: fleet.lifecycleHookName } } : {}),
    ...(fleet.batchHost ? { containers: {} } : {}),
    mountpoint: { version: props.mountpointVersion ?? MOUNTPOINT_DEFAULT_VERSION },
  };
  // The cache's zones bound where the fleet runs (chooseZones), and every instance gets its zone's bucket.
  if (props.expressCache) {
    const cache = props.expressCache;
    config.expressCache = {
      buckets: Object.fromEntries(fleet.azIds.map((azId) => [azId, cache.bucketFor(azId)])),
    };
  }
  if (props.scratch && !fleet.batchHost) config.scratch = props.scratch.agentSettings();
  return renderAgentConfig(scope, config);
}

/** What the launch template `LaunchTemplate` is made of beyond the shared props. */
interface FleetLaunchTemplateOptions {
  readonly architecture: 'arm64' | 'x86_64';
  readonly userData: ec2.UserData;
  readonly securityGroup: ec2.ISecurityGroup;
  /** The role (the template makes its instance profile) or an instance profile made by the caller. */
  readonly identity: { readonly role: iam.IRole } | { readonly instanceProfile: iam.IInstanceProfile };
  /** The IMDSv2 hop limit: 1 keeps credentials on the host, 2 reaches containers behind a bridge. */
  readonly hopLimit: 1 | 2;
  /** What a shutdown from inside the instance does. @default - EC2's default (stop) */
  readonly shutdownBehavior?: ec2.InstanceInitiatedShutdownBehavior;
}

/** The launch template: IMDSv2 required, encrypted gp3 root, Amazon Linux 2023 of the architecture by default. */
export function fleetLaunchTemplate(
  scope: Construct,
  props: FleetInstancesProps,
  options: FleetLaunchTemplateOptions,
): ec2.LaunchTemplate {
  return new ec2.LaunchTemplate(scope, 'LaunchTemplate', {
    machineImage:
      props.machineImage ??
      ec2.MachineImage.latestAmazonLinux2023({
        cpuType:
          options.architecture === 'arm64' ? ec2.AmazonLinuxCpuType.ARM_64 : ec2.AmazonLinuxCpuType.X86_64,
      }),
    userData: options.userData,
    ...options.identity,
    securityGroup: options.securityGroup,
    httpEndpoint: true,
    httpTokens: ec2.LaunchTemplateHttpTokens.REQUIRED,
    httpPutResponseHopLimit: options.hopLimit,
    instanceInitiatedShutdownBehavior: options.shutdownBehavior,
    blockDevices: [
      {
        deviceName: '/dev/xvda',
        volume: ec2.BlockDeviceVolume.ebs((props.rootVolumeSize ?? Size.gibibytes(30)).toGibibytes(), {
          encrypted: true,
          volumeType: ec2.EbsDeviceVolumeType.GP3,
          deleteOnTermination: true,
        }),
      },
    ],
  });
}
