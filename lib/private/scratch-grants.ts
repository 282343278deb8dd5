/**
 * What whoever makes and deletes a run's scratch file system needs, one statement (or tightly related pair) per
 * function, each scoped by the fleet tag, and the one function that puts them together (grantRunFileSystems) for
 * both makers: an instance's agent (ScratchFileSystems.grantCreateAndDelete) and a Batch fleet's functions
 * (batch-grants.ts), the fleet's KMS key included in both.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { IConstruct } from 'constructs';
import { TAG_FLEET, TAG_TEARDOWN_STARTED_AT } from '../../core/contract';
import type { IScratchFileSystems } from '../interfaces';
import { acknowledgeWildcardResource } from './nag';
import {
  anyFileSystemArn,
  anyNetworkInterfaceArn,
  onlyTagKeysOfFleet,
  subnetArns,
  taggedWithFleet,
  UNTAGGED,
} from './scratch-iam';

type Conditions = Record<string, Record<string, unknown>>;

/** One allow statement on the grantee's policy. */
function allow(grantee: iam.IGrantable, actions: string[], resourceArns: string[], conditions?: Conditions) {
  return iam.Grant.addToPrincipal({ grantee, actions, resourceArns, conditions });
}

/** What differs between the makers of a run's file system. */
export interface RunFileSystemMaker {
  /** The tag keys a create may set (`aws:TagKeys`): an instance's agent's and a Batch submit's differ. */
  readonly createTagKeys: readonly string[];
  /** Keys it may tag a file system of the fleet with after the create (a Batch run's job). @default - none */
  readonly tagKeysAfterCreate?: readonly string[];
  /** Whether it runs the burst-credit guard while a job runs (an instance's agent does; Batch has none). */
  readonly creditGuard: boolean;
}

/**
 * Everything a maker needs to create a run's file system (encrypted, with the scratch key when there is one, tagged
 * with the fleet), put its mount target in the scratch's subnets and security group, mark its teardown, and delete
 * it and its mount target: this fleet's file systems only, and nothing untagged ever. ARNs are formatted in
 * `scope`'s stack.
 */
export function grantRunFileSystems(
  scope: IConstruct,
  grantee: iam.IGrantable,
  scratch: IScratchFileSystems,
  maker: RunFileSystemMaker,
): iam.Grant {
  const { fleetId } = scratch;
  const fileSystems = anyFileSystemArn(scope);
  const networkInterfaces = anyNetworkInterfaceArn(scope);
  const securityGroup = Stack.of(scope).formatArn({
    service: 'ec2',
    resource: 'security-group',
    resourceName: scratch.securityGroup.securityGroupId,
  });
  acknowledgeScratchWildcards(grantee, fileSystems, networkInterfaces);
  // The order of the statements is the policy's: a new order would rewrite the deployed policy document.
  let grant = grantCreateTagged(grantee, fleetId, fileSystems, maker.createTagKeys);
  if (maker.tagKeysAfterCreate) {
    grant = grant.combine(
      allow(
        grantee,
        ['elasticfilesystem:TagResource'],
        [fileSystems],
        onlyTagKeysOfFleet(fleetId, maker.tagKeysAfterCreate),
      ),
    );
  }
  grant = grant
    .combine(grantTeardownMark(grantee, fleetId, fileSystems))
    .combine(grantMountTargetsAndDelete(grantee, fleetId, fileSystems))
    .combine(grantScratchLookups(grantee));
  if (maker.creditGuard) grant = grant.combine(grantCreditGuard(grantee, fleetId, fileSystems));
  grant = grant
    .combine(
      grantMountTargetInterfaces(
        grantee,
        networkInterfaces,
        subnetArns(scope, Object.values(scratch.subnets)),
        securityGroup,
      ),
    )
    .combine(grantEfsServiceLinkedRole(scope, grantee))
    .combine(grantScratchKey(grantee, scratch.encryptionKey));
  denyUntaggedScratch(grantee);
  return grant;
}

/** The two wildcard resources the scratch grants need, acknowledged with the conditions that bound them. */
function acknowledgeScratchWildcards(
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
 */
function grantCreateTagged(
  grantee: iam.IGrantable,
  fleetId: string,
  fileSystems: string,
  tagKeys: readonly string[],
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
function grantTeardownMark(grantee: iam.IGrantable, fleetId: string, fileSystems: string): iam.Grant {
  return allow(
    grantee,
    ['elasticfilesystem:TagResource'],
    [fileSystems],
    onlyTagKeysOfFleet(fleetId, [TAG_TEARDOWN_STARTED_AT]),
  );
}

/**
 * The burst-credit guard of a running job (core/credit/guard.ts): the switch to Elastic throughput on
 * this fleet's file systems only, and the file system's AWS/EFS metrics. GetMetricData on classic metrics has
 * no resource type and no condition key that narrows it to a namespace or dimension (the Service
 * Authorization Reference's only resource for it, `dataset`, is for OTLP data): read-only, Region-wide.
 */
function grantCreditGuard(grantee: iam.IGrantable, fleetId: string, fileSystems: string): iam.Grant {
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
function grantMountTargetsAndDelete(grantee: iam.IGrantable, fleetId: string, fileSystems: string) {
  return allow(grantee, MOUNT_TARGET_AND_DELETE_ACTIONS, [fileSystems], taggedWithFleet(fleetId));
}

/**
 * Lookup by CreationToken (after a create whose answer was lost) and the subnet and interface reads of
 * CreateMountTarget are list calls: no resource-level permissions exist.
 */
function grantScratchLookups(grantee: iam.IGrantable): iam.Grant {
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
function grantMountTargetInterfaces(
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
function grantEfsServiceLinkedRole(scope: IConstruct, grantee: iam.IGrantable): iam.Grant {
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
function denyUntaggedScratch(grantee: iam.IGrantable): void {
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
function grantScratchKey(grantee: iam.IGrantable, key: kms.IKey | undefined): iam.Grant {
  if (!key) return iam.Grant.drop(grantee, 'no scratch key: the AWS managed key for EFS');
  return key.grant(grantee, 'kms:DescribeKey', 'kms:CreateGrant', 'kms:GenerateDataKeyWithoutPlaintext');
}
