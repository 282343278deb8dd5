/**
 * The reaper function's IAM: read the evidence anywhere, but delete and mark only file systems tagged with
 * its fleet (untagged ones explicitly denied), and delete mount-target interfaces in the fleet's subnets.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import { TAG_MARKED_IDLE_AT } from '../../core/contract';
import type { IFleetNetwork } from '../interfaces';
import { acknowledgeWildcardResource } from './nag';
import {
  anyFileSystemArn,
  anyNetworkInterfaceArn,
  onlyTagKeysOfFleet,
  subnetArns,
  taggedWithFleet,
  UNTAGGED,
} from './scratch-iam';

export function grantReaping(role: iam.Role, fleetId: string, network: IFleetNetwork | undefined): void {
  const fileSystems = anyFileSystemArn(role);
  grantEvidenceDeletesAndMarks(role, fleetId, fileSystems);
  // DeleteMountTarget also deletes the mount target's network interface as the caller.
  const networkInterfaces = anyNetworkInterfaceArn(role);
  acknowledgeWildcardResource(
    role,
    '*',
    'Calls without resource-level permissions: the read-only evidence (elasticfilesystem:DescribeFileSystems/DescribeMountTargets, a paginated scan of the Region; cloudwatch:GetMetricData; ec2:DescribeInstances; batch:DescribeJobs/ListJobs for Batch runs) and tag:TagResources/UntagResources, which only pass the tag-conditioned elasticfilesystem:TagResource/UntagResource through.',
  );
  acknowledgeWildcardResource(
    role,
    fileSystems,
    'Orphans are unknown until found; deletes and marks require aws:ResourceTag/mountfleet:fleet to equal this fleet (tag changes only on mountfleet:marked-idle-at), and untagged file systems are explicitly denied.',
  );
  acknowledgeWildcardResource(
    role,
    networkInterfaces,
    "DeleteMountTarget deletes the mount target's network interface as the caller; the interface ids are unknown in advance (scoped to the fleet subnets by ec2:Subnet when the network is given).",
  );
  const fleetSubnets = subnetArns(role, Object.values(network?.subnets ?? {}));
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DeleteMountTargetInterfaces',
      actions: ['ec2:DeleteNetworkInterface'],
      resources: [networkInterfaces],
      conditions: fleetSubnets.length ? { ArnEquals: { 'ec2:Subnet': fleetSubnets } } : undefined,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DenyUntagged',
      effect: iam.Effect.DENY,
      actions: [
        'elasticfilesystem:DeleteMountTarget',
        'elasticfilesystem:DeleteFileSystem',
        'elasticfilesystem:TagResource',
        'elasticfilesystem:UntagResource',
      ],
      resources: ['*'],
      conditions: UNTAGGED,
    }),
  );
}

/** Reading the evidence anywhere; deleting and marking only the fleet's file systems. */
function grantEvidenceDeletesAndMarks(role: iam.Role, fleetId: string, fileSystems: string): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadEvidence',
      actions: [
        'elasticfilesystem:DescribeFileSystems',
        'elasticfilesystem:DescribeMountTargets',
        'cloudwatch:GetMetricData',
        'ec2:DescribeInstances',
        // A Batch run's file system is judged by its job (core/reaper/decide.ts rule 4). Neither action has a
        // resource type in the Service Authorization Reference (list_awsbatch.html): Resource must be "*".
        'batch:DescribeJobs',
        'batch:ListJobs',
      ],
      resources: ['*'],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DeleteOwnFleetScratch',
      actions: ['elasticfilesystem:DeleteMountTarget', 'elasticfilesystem:DeleteFileSystem'],
      resources: [fileSystems],
      conditions: taggedWithFleet(fleetId),
    }),
  );
  // The two-phase delete marks and unmarks, and may touch no other tag.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'MarkOwnFleetScratch',
      actions: ['elasticfilesystem:TagResource', 'elasticfilesystem:UntagResource'],
      resources: [fileSystems],
      conditions: onlyTagKeysOfFleet(fleetId, [TAG_MARKED_IDLE_AT]),
    }),
  );
  // Marks go through the Resource Groups Tagging API, 20 file systems a call. Its actions have no resource
  // type ("*"); for each ARN it then needs elasticfilesystem:TagResource/UntagResource as the caller, and
  // the statement above, with its tag conditions, is what confines the marks.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'BatchMarkOwnFleetScratch',
      actions: ['tag:TagResources', 'tag:UntagResources'],
      resources: ['*'],
    }),
  );
}
