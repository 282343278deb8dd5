import { Duration, Tags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { MOUNTPOINT_FLEET_DIMENSION, MOUNTPOINT_METRICS_NAMESPACE, TAG_FLEET } from '../core/contract';
import type { FleetInstancesProps } from './fleet-instances-props';
import {
  checkFleetProps,
  DEFAULT_INSTANCE_TYPES,
  fleetAgentConfigJson,
  fleetLaunchTemplate,
  fleetRole,
  fleetSecurityGroup,
  grantFleetInstances,
} from './private/fleet-instances';
import { validateCapacity } from './private/fleet-placement';
import { agentBundle, fleetUserData } from './private/fleet-user-data';
import { acknowledge } from './private/nag';

/** Props of {@link ComputeFleet}: the instances' ({@link FleetInstancesProps}) and the Auto Scaling group's. */
export interface ComputeFleetProps extends FleetInstancesProps {
  /** Fewest instances in the group. @default 0 */
  readonly minCapacity?: number;
  /** Most instances in the group. @default 4 */
  readonly maxCapacity?: number;
  /** Instances the group starts with. @default - minCapacity */
  readonly desiredCapacity?: number;
  /** On-Demand instances before any Spot. @default 0 */
  readonly onDemandBaseCapacity?: number;
  /** Percentage of On-Demand above the base (0 = all Spot). @default 0 */
  readonly onDemandPercentageAboveBaseCapacity?: number;
  /**
   * Whether containers on the instances (Docker bridge networking, build agents) need IMDS: the IMDSv2 hop
   * limit is then 2 instead of 1, so a token reaches one network hop past the host.
   * @default false
   */
  readonly containersNeedImds?: boolean;
  /** How long the termination lifecycle hook holds an instance for the agent's cleanup. @default Duration.minutes(10) */
  readonly terminationHookTimeout?: Duration;
}

/**
 * An Auto Scaling group whose instances run the mountfleet agent: a launch template (IMDSv2 required,
 * encrypted gp3 root, Amazon Linux 2023), mixed instance types on Spot (`price-capacity-optimized`),
 * subnets chosen by AZ ID (the zones with an Express cache bucket), a least-privilege instance role, a
 * termination lifecycle hook for cleanup, and user data that installs the agent bundle and writes
 * `/etc/mountfleet/agent.json` — validated at synth with the agent's own schema.
 */
export class ComputeFleet extends Construct implements ec2.IConnectable, iam.IGrantable {
  /** The fleet id its instances, scratch and IAM conditions carry. */
  readonly fleetId: string;
  /** The AZ IDs instances run in. */
  readonly azIds: string[];
  /** The instances' role: mounts, Express cache sessions, scratch, metrics and the termination hook. */
  readonly role: iam.Role;
  /** The instances' role, for `grant*` methods of other constructs. */
  readonly grantPrincipal: iam.IPrincipal;
  /** The instances' security group (no ingress unless you add it). */
  readonly securityGroup: ec2.ISecurityGroup;
  /** Network access to and from the instances. */
  readonly connections: ec2.Connections;
  /** The launch template: IMDSv2 required, encrypted gp3 root, the user data that starts the agent. */
  readonly launchTemplate: ec2.LaunchTemplate;
  /** The Auto Scaling group (mixed instance types, Spot first); scale it yourself or from your scheduler. */
  readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  /** Name of the termination lifecycle hook the agent completes. */
  readonly terminationHookName: string;
  /** agent.json as a deploy-time JSON string (tokens resolve at deploy). */
  readonly agentConfigJson: string;
  /**
   * `/mountfleet/<fleetId>/agent-metrics`: the CloudWatch agent ships the mountfleet agent's
   * embedded-metric-format lines (Express cache switches) here. Deleted with the stack — the metrics
   * extracted from it stay in CloudWatch — so that a fixed name never blocks re-creating the fleet.
   */
  readonly metricsLogGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ComputeFleetProps) {
    super(scope, id);
    const checked = checkFleetProps(this, props);
    this.fleetId = props.fleetId;
    this.azIds = checked.azIds;
    validateCapacity(this, {
      minCapacity: props.minCapacity ?? 0,
      maxCapacity: props.maxCapacity ?? 4,
      onDemandPercentageAboveBaseCapacity: props.onDemandPercentageAboveBaseCapacity ?? 0,
    });

    this.securityGroup = fleetSecurityGroup(this, props);
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup] });
    this.role = fleetRole(this, props);
    this.grantPrincipal = this.role;
    this.terminationHookName = `mountfleet-${props.fleetId}-teardown`;
    this.metricsLogGroup = grantFleetInstances(this, this.role, props, {
      mounts: checked.mounts,
      terminationHook: true,
      batchHost: false,
    });

    this.agentConfigJson = fleetAgentConfigJson(this, props, {
      ...checked,
      lifecycleHookName: this.terminationHookName,
      batchHost: false,
    });
    const userData = fleetUserData(this, {
      bundle: agentBundle(this, this.role),
      agentConfigJson: this.agentConfigJson,
      scratch: props.scratch !== undefined,
    });

    this.launchTemplate = fleetLaunchTemplate(this, props, {
      architecture: checked.architecture,
      userData,
      identity: { role: this.role },
      securityGroup: this.securityGroup,
      // 1 keeps IMDS credentials on the host: a container behind a bridge is one hop further away.
      hopLimit: props.containersNeedImds ? 2 : 1,
    });

    this.autoScalingGroup = new autoscaling.AutoScalingGroup(this, 'Group', {
      vpc: props.network.vpc,
      vpcSubnets: { subnets: this.azIds.map((azId) => props.network.subnets[azId]) },
      minCapacity: props.minCapacity ?? 0,
      maxCapacity: props.maxCapacity ?? 4,
      desiredCapacity: props.desiredCapacity,
      capacityRebalance: true,
      mixedInstancesPolicy: {
        launchTemplate: this.launchTemplate,
        instancesDistribution: {
          onDemandBaseCapacity: props.onDemandBaseCapacity ?? 0,
          onDemandPercentageAboveBaseCapacity: props.onDemandPercentageAboveBaseCapacity ?? 0,
          spotAllocationStrategy: autoscaling.SpotAllocationStrategy.PRICE_CAPACITY_OPTIMIZED,
        },
        launchTemplateOverrides: (props.instanceTypes ?? DEFAULT_INSTANCE_TYPES).map((t) => ({
          instanceType: new ec2.InstanceType(t),
        })),
      },
    });
    Tags.of(this.autoScalingGroup).add(TAG_FLEET, props.fleetId);
    // The agent config names the cache buckets without a Ref when they are named: no instance before them.
    if (props.expressCache) this.autoScalingGroup.node.addDependency(props.expressCache);
    // The role may not create log groups: the group must exist before the first instance ships to it.
    this.autoScalingGroup.node.addDependency(this.metricsLogGroup);
    this.autoScalingGroup.addLifecycleHook('Teardown', {
      lifecycleHookName: this.terminationHookName,
      lifecycleTransition: autoscaling.LifecycleTransition.INSTANCE_TERMINATING,
      heartbeatTimeout: props.terminationHookTimeout ?? Duration.minutes(10),
      defaultResult: autoscaling.DefaultResult.CONTINUE,
    });

    acknowledge(
      this.autoScalingGroup,
      'AwsSolutions-AS3',
      'Batch fleets scale up and down all day; per-event notifications would be noise. Scaling activity is in the Auto Scaling activity history.',
    );
    acknowledge(
      this.autoScalingGroup,
      'AwsSolutions-EC26',
      "The rule cannot follow the mixed-instances launch template (a GetAtt); the launch template's root volume is encrypted (gp3, Encrypted: true), which the construct tests assert.",
    );
  }

  /**
   * A Mountpoint metric of this fleet, as the CloudWatch agent publishes it: the OTLP name unchanged
   * (`fuse.request_latency`, `experimental.fuse.cache_hit`), in {@link MOUNTPOINT_METRICS_NAMESPACE}, with
   * the group's name as `AutoScalingGroupName` beside Mountpoint's own dimensions (`fuse_request`, …).
   */
  metricMountpoint(
    metricName: string,
    dimensions: Record<string, string> = {},
    props?: cloudwatch.MetricOptions,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: MOUNTPOINT_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: {
        ...dimensions,
        [MOUNTPOINT_FLEET_DIMENSION]: this.autoScalingGroup.autoScalingGroupName,
      },
      ...props,
    });
  }
}
