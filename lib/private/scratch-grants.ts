/**
 * What the agent needs to create, mount and delete its fleet's scratch file systems, one statement (or
 * tightly related pair) per function, each scoped by the fleet tag: ScratchFileSystems.grantCreateAndDelete
 * puts them together.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { IConstruct } from 'constructs';
import { SCRATCH_CREATE_TAG_KEYS, TAG_FLEET, TAG_TEARDOWN_STARTED_AT } from '../../core/contract';
import { acknowledgeWildcardResource } from './nag';
import { onlyTagKeysOfFleet, taggedWithFleet, UNTAGGED } from './scratch-iam';

type Conditions = Record<string, Record<string, unknown>>;

/** One allow statement on the grantee's policy. */
function allow(grantee: iam.IGrantable, actions: string[], resourceArns: string[], conditions?: Conditions) {
  return iam.Grant.addToPrincipal({ grantee, actions, resourceArns, conditions });
}

/** The two wildcard resources the scratch grants need, acknowledged with the conditions that bound them. */
export function acknowledgeScratchWildcards(
  grantee: iam.IGrantable,
  fileSystems: string,
  networkInterfaces: string,
): void {
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    fileSystems,
    'Scratch file systems are created at run time with unknown ids; every statement on them requires aws:ResourceTag/mountfleet:fleet to equal this fleet, and untagged ones are explicitly denied.',
  );
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    networkInterfaces,
    "Mount-target network interfaces are created by EFS at run time with unknown ids: creation is bounded by the fleet's mount-target subnet and security-group ARNs (resources of the same statement), deletion by the ec2:Subnet condition.",
  );
}

/**
 * Create only encrypted file systems tagged with the fleet (with the create tags only), and tag them as part
 * of the create. CreateFileSystem has no resource type: the request's tags and encryption are what can be checked.
 * `tagKeys`: the keys a create may set (a Batch submit's differ from an instance's).
 */
export function grantCreateTagged(
  grantee: iam.IGrantable,
  fleetId: string,
  fileSystems: string,
  tagKeys: readonly string[] = SCRATCH_CREATE_TAG_KEYS,
): iam.Grant {
  return allow(grantee, ['elasticfilesystem:CreateFileSystem'], ['*'], {
    StringEquals: { [`aws:RequestTag/${TAG_FLEET}`]: fleetId },
    'ForAllValues:StringEquals': { 'aws:TagKeys': [...tagKeys] },
    Bool: { 'elasticfilesystem:Encrypted': 'true' },
  }).combine(
    allow(grantee, ['elasticfilesystem:TagResource'], [fileSystems], {
      StringEquals: {
        'elasticfilesystem:CreateAction': 'CreateFileSystem',
        [`aws:RequestTag/${TAG_FLEET}`]: fleetId,
      },
    }),
  );
}

/**
 * A teardown marks its start for the reaper (core/efs/teardown.ts): only that key, only on this fleet's file
 * systems. Nothing else is ever retagged: every run owns the file system it created for its whole life.
 */
export function grantTeardownMark(grantee: iam.IGrantable, fleetId: string, fileSystems: string): iam.Grant {
  return allow(
    grantee,
    ['elasticfilesystem:TagResource'],
    [fileSystems],
    onlyTagKeysOfFleet(fleetId, [TAG_TEARDOWN_STARTED_AT]),
  );
}

/**
 * The burst-credit guard of a running job (core/scratch/credit-guard.ts): the switch to Elastic throughput on
 * this fleet's file systems only, and the file system's AWS/EFS metrics. GetMetricData on classic metrics has
 * no resource type and no condition key that narrows it to a namespace or dimension (the Service
 * Authorization Reference's only resource for it, `dataset`, is for OTLP data): read-only, Region-wide.
 */
export function grantCreditGuard(grantee: iam.IGrantable, fleetId: string, fileSystems: string): iam.Grant {
  return allow(
    grantee,
    ['elasticfilesystem:UpdateFileSystem'],
    [fileSystems],
    taggedWithFleet(fleetId),
  ).combine(allow(grantee, ['cloudwatch:GetMetricData'], ['*']));
}

/** What the agent does to its own file systems besides tagging: mount targets in, then everything out. */
const MOUNT_TARGET_AND_DELETE_ACTIONS = [
  'elasticfilesystem:CreateMountTarget',
  'elasticfilesystem:DescribeMountTargets',
  'elasticfilesystem:DeleteMountTarget',
  'elasticfilesystem:DeleteFileSystem',
];

/** Mount targets and deletion, on this fleet's file systems only. */
export function grantMountTargetsAndDelete(grantee: iam.IGrantable, fleetId: string, fileSystems: string) {
  return allow(grantee, MOUNT_TARGET_AND_DELETE_ACTIONS, [fileSystems], taggedWithFleet(fleetId));
}

/**
 * Lookup by CreationToken (after a create whose answer was lost) and the subnet and interface reads of
 * CreateMountTarget are list calls: no resource-level permissions exist.
 */
export function grantScratchLookups(grantee: iam.IGrantable): iam.Grant {
  return allow(
    grantee,
    ['elasticfilesystem:DescribeFileSystems', 'ec2:DescribeSubnets', 'ec2:DescribeNetworkInterfaces'],
    ['*'],
  );
}

/**
 * CreateMountTarget creates the mount target's network interface as the caller. CreateNetworkInterface
 * authorizes three resources: the new interface (which has no subnet yet to condition on — only request tags,
 * and EFS sets none), the subnet and the security group (`securityGroup`, an ARN); those ARNs are the scope.
 * DeleteMountTarget deletes that interface as the caller; an existing interface has a subnet, which
 * DeleteNetworkInterface evaluates as ec2:Subnet.
 */
export function grantMountTargetInterfaces(
  grantee: iam.IGrantable,
  networkInterfaces: string,
  subnets: string[],
  securityGroup: string,
): iam.Grant {
  return allow(
    grantee,
    ['ec2:CreateNetworkInterface'],
    [networkInterfaces, ...subnets, securityGroup],
  ).combine(
    allow(grantee, ['ec2:DeleteNetworkInterface'], [networkInterfaces], {
      ArnEquals: { 'ec2:Subnet': subnets },
    }),
  );
}

/** The first EFS file system of an account creates the EFS service-linked role. */
export function grantEfsServiceLinkedRole(scope: IConstruct, grantee: iam.IGrantable): iam.Grant {
  const role = Stack.of(scope).formatArn({
    service: 'iam',
    region: '',
    resource: 'role',
    resourceName: 'aws-service-role/elasticfilesystem.amazonaws.com/AWSServiceRoleForAmazonElasticFileSystem',
  });
  return allow(grantee, ['iam:CreateServiceLinkedRole'], [role], {
    StringEquals: { 'iam:AWSServiceName': 'elasticfilesystem.amazonaws.com' },
  });
}

/** Whatever else the role is granted, nothing untagged is ever touched. */
export function denyUntaggedScratch(grantee: iam.IGrantable): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      effect: iam.Effect.DENY,
      actions: [
        'elasticfilesystem:CreateMountTarget',
        'elasticfilesystem:DeleteMountTarget',
        'elasticfilesystem:DeleteFileSystem',
        'elasticfilesystem:UpdateFileSystem',
      ],
      resources: ['*'],
      conditions: UNTAGGED,
    }),
  );
}

/**
 * The fleet's scratch key, when it has one: CreateFileSystem with a customer managed key needs DescribeKey and
 * CreateGrant (EFS keeps a grant for the file system's life) and GenerateDataKeyWithoutPlaintext on it. An empty
 * grant without a key (the AWS managed key needs nothing).
 */
export function grantScratchKey(grantee: iam.IGrantable, key: kms.IKey | undefined): iam.Grant {
  if (!key) return iam.Grant.drop(grantee, 'no scratch key: the AWS managed key for EFS');
  return key.grant(grantee, 'kms:DescribeKey', 'kms:CreateGrant', 'kms:GenerateDataKeyWithoutPlaintext');
}
