import { Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import {
  SCRATCH_CREATE_TAG_KEYS,
  TAG_FLEET,
  TAG_OWNER_INSTANCE,
  TAG_TEARDOWN_STARTED_AT,
} from '../core/tags';
import type { IFleetNetwork } from './fleet-network';
import { acknowledgeWildcardResource } from './private/nag';
import { invalidProp, validateFleetId, validateMountPath } from './private/validation';

/** The NFS port of EFS mount targets (TLS mounts use it too, through stunnel). */
export const NFS_PORT = 2049;

/**
 * The `scratch` section of the agent config. ComputeFleet assigns it to the config's schema type, so the
 * compiler keeps the two in step; the schema checks the values at synth.
 */
export interface ScratchAgentSettings {
  /** The mount targets' security group id. */
  readonly securityGroupId: string;
  /** The mount-target subnet id per AZ ID. */
  readonly subnets: { [azId: string]: string };
  /** Where `mountfleet scratch run` mounts when no `--path` is given. @default '/mnt/scratch' */
  readonly path?: string;
  /** Seconds a job gets after SIGTERM before a lazy unmount. @default 20 */
  readonly teardownGraceSeconds?: number;
  /** The KMS key for the file systems. @default - the AWS managed key `aws/elasticfilesystem` */
  readonly kmsKeyId?: string;
}

/** Props of {@link ScratchFileSystems}. */
export interface ScratchFileSystemsProps {
  /** The fleet id: every scratch file system carries it in the `mountfleet:fleet` tag, and IAM keys on it. */
  readonly fleetId: string;
  /** The VPC and subnet per AZ ID that mount targets go into (one per zone the fleet runs in). */
  readonly network: IFleetNetwork;
  /** A security group for the mount targets. @default - a new one with no rules until `allowMountsFrom` */
  readonly securityGroup?: ec2.ISecurityGroup;
  /** A KMS key for the file systems. @default - the AWS managed key `aws/elasticfilesystem` */
  readonly encryptionKey?: kms.IKey;
  /** Where `mountfleet scratch run` mounts when no `--path` is given (see the README's path rules). @default '/mnt/scratch' */
  readonly mountPath?: string;
  /** How long a job gets after SIGTERM before the agent unmounts lazily. @default Duration.seconds(20) */
  readonly teardownGrace?: Duration;
}

/**
 * What per-job EFS One Zone scratch file systems need at deploy time. The agent creates and deletes the
 * file systems at run time (bursting throughput, `Backup: false`, encrypted, tagged with the fleet id);
 * this construct provides the mount-target security group (TCP 2049 from the fleet only), the subnet
 * per AZ ID, and the tag-scoped IAM: create only with the fleet tag and encryption, touch only what
 * carries the fleet tag, and an explicit deny for anything untagged.
 */
export class ScratchFileSystems extends Construct implements ec2.IConnectable {
  readonly fleetId: string;
  /** The mount targets' security group. */
  readonly securityGroup: ec2.ISecurityGroup;
  /** Network access to the mount targets (default port TCP 2049). */
  readonly connections: ec2.Connections;
  /** Subnet for mount targets, per AZ ID. */
  readonly subnets: Record<string, ec2.ISubnet>;
  private readonly encryptionKey?: kms.IKey;
  private readonly mountPath: string;
  private readonly teardownGrace: Duration;

  constructor(scope: Construct, id: string, props: ScratchFileSystemsProps) {
    super(scope, id);
    validateFleetId(this, props.fleetId);
    if (Object.keys(props.network.subnets).length === 0) {
      invalidProp(this, 'network.subnets', 'has no subnet', 'give one subnet per AZ ID the fleet runs in');
    }
    this.fleetId = props.fleetId;
    this.subnets = { ...props.network.subnets };
    this.encryptionKey = props.encryptionKey;
    this.mountPath = props.mountPath ?? '/mnt/scratch';
    validateMountPath(this, 'mountPath', this.mountPath);
    this.teardownGrace = props.teardownGrace ?? Duration.seconds(20);
    this.securityGroup =
      props.securityGroup ??
      new ec2.SecurityGroup(this, 'SecurityGroup', {
        vpc: props.network.vpc,
        description: `EFS scratch mount targets of fleet ${props.fleetId}: NFS from the fleet only`,
        allowAllOutbound: false,
      });
    this.connections = new ec2.Connections({
      securityGroups: [this.securityGroup],
      defaultPort: ec2.Port.tcp(NFS_PORT),
    });
  }

  /** The mount targets' security group id. */
  get securityGroupId(): string {
    return this.securityGroup.securityGroupId;
  }

  /** The mount-target subnet id for an AZ ID. */
  subnetIdFor(azId: string): string {
    const subnet = this.subnets[azId];
    if (!subnet)
      invalidProp(
        this,
        `subnetIdFor(${azId})`,
        `no subnet in ${azId}`,
        `known: ${Object.keys(this.subnets).join(', ')}`,
      );
    return subnet.subnetId;
  }

  /** Lets a peer (the fleet) reach the mount targets on TCP 2049 — the only rule the group gets. */
  allowMountsFrom(peer: ec2.IConnectable): void {
    this.connections.allowDefaultPortFrom(peer, `NFS from fleet ${this.fleetId}`);
  }

  /** The `scratch` settings of the agent config. */
  agentSettings(): ScratchAgentSettings {
    return {
      securityGroupId: this.securityGroupId,
      subnets: Object.fromEntries(Object.entries(this.subnets).map(([azId, s]) => [azId, s.subnetId])),
      path: this.mountPath,
      teardownGraceSeconds: this.teardownGrace.toSeconds(),
      ...(this.encryptionKey ? { kmsKeyId: this.encryptionKey.keyArn } : {}),
    };
  }

  /**
   * Grants the instance role what the agent needs to create, mount and delete its scratch file systems,
   * scoped by the fleet tag, and what the burst-credit guard needs while a job runs: the file systems'
   * metrics, and the switch to Elastic throughput (`scratch run --on-credit-low elastic`).
   */
  grantCreateAndDelete(grantee: iam.IGrantable): iam.Grant {
    const stack = Stack.of(this);
    const fileSystems = stack.formatArn({
      service: 'elasticfilesystem',
      resource: 'file-system',
      resourceName: '*',
    });
    const networkInterfaces = stack.formatArn({
      service: 'ec2',
      resource: 'network-interface',
      resourceName: '*',
    });
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
    const allow = (
      actions: string[],
      resourceArns: string[],
      conditions?: Record<string, Record<string, unknown>>,
    ) => iam.Grant.addToPrincipal({ grantee, actions, resourceArns, conditions });
    // CreateFileSystem has no resource type: the request's tags and encryption are what can be checked.
    let grant = allow(['elasticfilesystem:CreateFileSystem'], ['*'], {
      StringEquals: { [`aws:RequestTag/${TAG_FLEET}`]: this.fleetId },
      'ForAllValues:StringEquals': { 'aws:TagKeys': [...SCRATCH_CREATE_TAG_KEYS] },
      Bool: { 'elasticfilesystem:Encrypted': 'true' },
    })
      .combine(
        allow(['elasticfilesystem:TagResource'], [fileSystems], {
          StringEquals: {
            'elasticfilesystem:CreateAction': 'CreateFileSystem',
            [`aws:RequestTag/${TAG_FLEET}`]: this.fleetId,
          },
        }),
      )
      // A re-run of a job on another instance reuses its file system and moves the owner tag to the new
      // instance (core/scratch/provision.ts), and a teardown marks its start for the reaper
      // (core/efs-teardown.ts): only those keys, only on this fleet's file systems.
      .combine(
        allow(['elasticfilesystem:TagResource'], [fileSystems], {
          StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: this.fleetId },
          'ForAllValues:StringEquals': { 'aws:TagKeys': [TAG_OWNER_INSTANCE, TAG_TEARDOWN_STARTED_AT] },
          // ForAllValues is also true of a request with no tag keys at all: require some.
          Null: { 'aws:TagKeys': 'false' },
        }),
      )
      .combine(
        allow(
          [
            'elasticfilesystem:CreateMountTarget',
            'elasticfilesystem:DescribeMountTargets',
            'elasticfilesystem:DeleteMountTarget',
            'elasticfilesystem:DeleteFileSystem',
          ],
          [fileSystems],
          { StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: this.fleetId } },
        ),
      )
      // The burst-credit guard's switch to Elastic throughput (`scratch run --on-credit-low elastic`).
      .combine(
        allow(['elasticfilesystem:UpdateFileSystem'], [fileSystems], {
          StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: this.fleetId },
        }),
      )
      // The burst-credit guard reads its file system's AWS/EFS metrics. GetMetricData on classic metrics has
      // no resource type and no condition key that narrows it to a namespace or dimension (the Service
      // Authorization Reference's only resource for it, `dataset`, is for OTLP data): read-only, Region-wide.
      .combine(allow(['cloudwatch:GetMetricData'], ['*']))
      // Lookup by CreationToken (idempotent create) is a list call, and so is the check that a reused file
      // system's previous owner instance is no longer running: no resource-level permissions exist.
      .combine(
        allow(
          [
            'elasticfilesystem:DescribeFileSystems',
            'ec2:DescribeSubnets',
            'ec2:DescribeNetworkInterfaces',
            'ec2:DescribeInstances',
          ],
          ['*'],
        ),
      )
      // CreateMountTarget creates the mount target's network interface as the caller. CreateNetworkInterface
      // authorizes three resources: the new interface (which has no subnet yet to condition on — only request
      // tags, and EFS sets none), the subnet and the security group. The subnet and group ARNs are the scope.
      .combine(
        allow(
          ['ec2:CreateNetworkInterface'],
          [
            networkInterfaces,
            ...this.subnetArns(),
            stack.formatArn({
              service: 'ec2',
              resource: 'security-group',
              resourceName: this.securityGroupId,
            }),
          ],
        ),
      )
      // DeleteMountTarget deletes that interface as the caller; an existing interface has a subnet, which
      // DeleteNetworkInterface evaluates as ec2:Subnet.
      .combine(
        allow(['ec2:DeleteNetworkInterface'], [networkInterfaces], {
          ArnEquals: { 'ec2:Subnet': this.subnetArns() },
        }),
      )
      // The first EFS file system of an account creates the EFS service-linked role.
      .combine(
        allow(
          ['iam:CreateServiceLinkedRole'],
          [
            stack.formatArn({
              service: 'iam',
              region: '',
              resource: 'role',
              resourceName:
                'aws-service-role/elasticfilesystem.amazonaws.com/AWSServiceRoleForAmazonElasticFileSystem',
            }),
          ],
          { StringEquals: { 'iam:AWSServiceName': 'elasticfilesystem.amazonaws.com' } },
        ),
      );
    // Whatever else the role is granted, nothing untagged is ever touched.
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: [
          'elasticfilesystem:CreateMountTarget',
          'elasticfilesystem:DeleteMountTarget',
          'elasticfilesystem:DeleteFileSystem',
        ],
        resources: ['*'],
        conditions: { Null: { [`aws:ResourceTag/${TAG_FLEET}`]: 'true' } },
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: ['elasticfilesystem:UpdateFileSystem'],
        resources: ['*'],
        conditions: { Null: { [`aws:ResourceTag/${TAG_FLEET}`]: 'true' } },
      }),
    );
    if (this.encryptionKey) {
      grant = grant.combine(
        this.encryptionKey.grant(
          grantee,
          'kms:DescribeKey',
          'kms:CreateGrant',
          'kms:GenerateDataKeyWithoutPlaintext',
        ),
      );
    }
    return grant;
  }

  private subnetArns(): string[] {
    return Object.values(this.subnets).map((s) =>
      Stack.of(this).formatArn({ service: 'ec2', resource: 'subnet', resourceName: s.subnetId }),
    );
  }
}
