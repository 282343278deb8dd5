/**
 * The IAM of ComputeFleet's instance role beyond its mounts (private/mount-grants.ts): the CloudWatch agent's
 * metrics and log streams, instance-type lookups and the fleet's own termination hook.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { MOUNTPOINT_METRICS_NAMESPACE, TAG_FLEET } from '../../core/contract';
import { acknowledgeWildcardResource } from './nag';

/**
 * The CloudWatch agent: PutMetricData to Mountpoint's namespace only, the group name for its one dimension, and
 * log streams in the fleet's metrics log group only (no CreateLogGroup, no retention). The Express switch metrics
 * need no PutMetricData: they are embedded-metric-format lines in that log group, which CloudWatch Logs extracts.
 */
export function grantFleetMetrics(role: iam.Role, metricsLogGroup: logs.ILogGroup): void {
  acknowledgeWildcardResource(
    role,
    '*',
    'cloudwatch:PutMetricData has no resource type and is limited by the cloudwatch:namespace condition to the mountfleet namespace; ec2:DescribeTags has no resource type (the CloudWatch agent reads its own aws:autoscaling:groupName tag for the AutoScalingGroupName dimension).',
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PublishMountpointMetrics',
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'],
      conditions: { StringEquals: { 'cloudwatch:namespace': MOUNTPOINT_METRICS_NAMESPACE } },
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadOwnGroupNameForMetrics',
      actions: ['ec2:DescribeTags'],
      resources: ['*'],
    }),
  );
  const streams = Stack.of(role).formatArn({
    service: 'logs',
    resource: 'log-group',
    resourceName: `${metricsLogGroup.logGroupName}:log-stream:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  acknowledgeWildcardResource(
    role,
    streams,
    "The CloudWatch agent names each instance's log stream by its instance id, unknown at deploy; the streams are those of the fleet's own metrics log group only.",
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ShipAgentMetricsLog',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [streams],
    }),
  );
}

/** Tuning (instance type facts) and, unless turned off, the termination hook of this fleet's group only. */
export function grantAgentBasics(
  role: iam.Role,
  fleetId: string,
  options: { readonly terminationHook: boolean } = { terminationHook: true },
): void {
  if (!options.terminationHook) {
    // A Batch instance has no termination hook of its own: the tuner's instance-type facts only.
    acknowledgeWildcardResource(
      role,
      '*',
      'Describe/list calls without resource-level permissions (ec2:DescribeInstanceTypes, DescribeSubnets, DescribeNetworkInterfaces, elasticfilesystem:DescribeFileSystems) and cloudwatch:GetMetricData (no resource type for classic metrics).',
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'DescribeForTuning',
        actions: ['ec2:DescribeInstanceTypes'],
        resources: ['*'],
      }),
    );
    return;
  }
  // arn:aws:autoscaling:R:A:autoScalingGroup:<uuid>:autoScalingGroupName/<name> — colons after the type.
  const asgArns = Stack.of(role).formatArn({
    service: 'autoscaling',
    resource: 'autoScalingGroup',
    resourceName: '*:autoScalingGroupName/*',
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  acknowledgeWildcardResource(
    role,
    '*',
    'Describe/list calls without resource-level permissions (ec2:DescribeInstanceTypes, DescribeSubnets, DescribeNetworkInterfaces, autoscaling:DescribeAutoScalingInstances, elasticfilesystem:DescribeFileSystems), cloudwatch:GetMetricData (the scratch burst-credit guard; no resource type for classic metrics), and elasticfilesystem:CreateFileSystem, which has no resource type and is gated by conditions on the fleet tag, the allowed tag keys and encryption.',
  );
  acknowledgeWildcardResource(
    role,
    asgArns,
    "Group ARNs carry a generated UUID; CompleteLifecycleAction and RecordLifecycleActionHeartbeat evaluate autoscaling:ResourceTag on the group (Service Authorization Reference), which limits them to this fleet's group.",
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DescribeForTuningAndTeardown',
      actions: ['ec2:DescribeInstanceTypes', 'autoscaling:DescribeAutoScalingInstances'],
      resources: ['*'],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CompleteOwnTerminationHook',
      actions: ['autoscaling:CompleteLifecycleAction', 'autoscaling:RecordLifecycleActionHeartbeat'],
      resources: [asgArns],
      conditions: { StringEquals: { [`autoscaling:ResourceTag/${TAG_FLEET}`]: fleetId } },
    }),
  );
}
