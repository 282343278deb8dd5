import { Duration } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import {
  DEFAULT_SCRATCH_PATH,
  DEFAULT_TEARDOWN_GRACE_SECONDS,
  SCRATCH_CREATE_TAG_KEYS,
} from '../core/contract';
import type { IFleetNetwork, IScratchFileSystems, ScratchAgentSettings } from './interfaces';
import { grantRunFileSystems } from './private/scratch-grants';
import { invalidProp, validateFleetId, validateMountPath } from './private/validation';

/** The NFS port of EFS mount targets (TLS mounts use it too, through stunnel). */
export const NFS_PORT = 2049;

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

/** Props of {@link ScratchFileSystems.fromScratchFileSystemsAttributes}: scratch set up outside this construct. */
export interface ScratchFileSystemsAttributes {
  /** The fleet id the file systems are tagged with, and on which the IAM conditions key. */
  readonly fleetId: string;
  /** The existing mount-target security group (`allowMountsFrom` adds TCP 2049 from the fleet when it is mutable). */
  readonly securityGroup: ec2.ISecurityGroup;
  /** The existing subnet for mount targets, per AZ ID. */
  readonly subnets: Record<string, ec2.ISubnet>;
  /** The KMS key for the file systems. @default - the AWS managed key `aws/elasticfilesystem` */
  readonly encryptionKey?: kms.IKey;
  /** Where `mountfleet scratch run` mounts when no `--path` is given. @default '/mnt/scratch' */
  readonly mountPath?: string;
  /** How long a job gets after SIGTERM before the agent unmounts lazily. @default Duration.seconds(20) */
  readonly teardownGrace?: Duration;
}

/** What both kinds of scratch are made from: the attributes, with the security group made in the construct's scope. */
interface ScratchSetup extends Omit<ScratchFileSystemsAttributes, 'securityGroup'> {
  /** The prop that gave the subnets, named in the error when there are none. */
  readonly subnetsProp: string;
  readonly securityGroup: (scope: Construct) => ec2.ISecurityGroup;
}

/** The agent settings, the mount rule and the tag-scoped IAM that new and imported scratch share. */
abstract class ScratchFileSystemsBase extends Construct implements IScratchFileSystems {
  /** The fleet whose tag every scratch file system carries. */
  readonly fleetId: string;
  /** The mount targets' security group. */
  readonly securityGroup: ec2.ISecurityGroup;
  /** Network access to the mount targets (default port TCP 2049). */
  readonly connections: ec2.Connections;
  /** Subnet for mount targets, per AZ ID. */
  readonly subnets: Record<string, ec2.ISubnet>;
  /** The KMS key the file systems are encrypted with; the AWS managed key `aws/elasticfilesystem` when unset. */
  readonly encryptionKey?: kms.IKey;
  private readonly mountPath: string;
  private readonly teardownGrace: Duration;

  protected constructor(scope: Construct, id: string, setup: ScratchSetup) {
    super(scope, id);
    validateFleetId(this, setup.fleetId);
    if (Object.keys(setup.subnets).length === 0) {
      invalidProp(this, setup.subnetsProp, 'has no subnet', 'give one subnet per AZ ID the fleet runs in');
    }
    this.fleetId = setup.fleetId;
    this.subnets = { ...setup.subnets };
    this.encryptionKey = setup.encryptionKey;
    this.mountPath = setup.mountPath ?? DEFAULT_SCRATCH_PATH;
    validateMountPath(this, 'mountPath', this.mountPath);
    this.teardownGrace = setup.teardownGrace ?? Duration.seconds(DEFAULT_TEARDOWN_GRACE_SECONDS);
    this.securityGroup = setup.securityGroup(this);
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
   * Grants the instance role what the agent needs to create, mount and delete its scratch file systems (and run
   * their burst-credit guard), scoped by the fleet tag, with the scratch key (lib/private/scratch-grants.ts has
   * each statement and its reason).
   */
  grantCreateAndDelete(grantee: iam.IGrantable): iam.Grant {
    return grantRunFileSystems(this, grantee, this, {
      createTagKeys: SCRATCH_CREATE_TAG_KEYS,
      creditGuard: true,
    });
  }
}

/**
 * What per-job EFS One Zone scratch file systems need at deploy time. The agent creates and deletes the
 * file systems at run time (bursting throughput, `Backup: false`, encrypted, tagged with the fleet id);
 * this construct provides the mount-target security group (TCP 2049 from the fleet only), the subnet
 * per AZ ID, and the tag-scoped IAM: create only with the fleet tag and encryption, touch only what
 * carries the fleet tag, and an explicit deny for anything untagged.
 */
export class ScratchFileSystems extends ScratchFileSystemsBase {
  /**
   * Scratch whose security group and subnets exist already (another stack, a network team's VPC): the same
   * agent settings and tag-scoped IAM, nothing created.
   */
  static fromScratchFileSystemsAttributes(
    scope: Construct,
    id: string,
    attrs: ScratchFileSystemsAttributes,
  ): IScratchFileSystems {
    return new ImportedScratchFileSystems(scope, id, attrs);
  }

  constructor(scope: Construct, id: string, props: ScratchFileSystemsProps) {
    super(scope, id, {
      ...props,
      subnets: props.network.subnets,
      subnetsProp: 'network.subnets',
      securityGroup: (self) =>
        props.securityGroup ??
        new ec2.SecurityGroup(self, 'SecurityGroup', {
          vpc: props.network.vpc,
          description: `EFS scratch mount targets of fleet ${props.fleetId}: NFS from the fleet only`,
          allowAllOutbound: false,
        }),
    });
  }
}

class ImportedScratchFileSystems extends ScratchFileSystemsBase {
  constructor(scope: Construct, id: string, attrs: ScratchFileSystemsAttributes) {
    super(scope, id, { ...attrs, subnetsProp: 'subnets', securityGroup: () => attrs.securityGroup });
  }
}
