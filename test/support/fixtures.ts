/** Emulator fixtures shared by integration tests: a VPC with one subnet per AZ, and scratch file systems. */
import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeAvailabilityZonesCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import {
  CreateFileSystemCommand,
  CreateMountTargetCommand,
  type EFSClient,
  type Tag,
} from '@aws-sdk/client-efs';
import { parseAgentConfig, type AgentConfig } from '../../core/contract/agent-config';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE } from '../../core/contract/tags';

export interface TestSubnet {
  readonly subnetId: string;
  readonly availabilityZone: string;
  readonly availabilityZoneId: string;
}

export interface TestNetwork {
  readonly vpcId: string;
  readonly securityGroupId: string;
  readonly subnets: TestSubnet[];
}

/** A VPC with a /24 subnet in each of the first `zones` AZs of the Region, and a security group. */
export async function createNetwork(ec2: EC2Client, zones = 2): Promise<TestNetwork> {
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }));
  const vpcId = vpc.Vpc!.VpcId!;
  const azs = (await ec2.send(new DescribeAvailabilityZonesCommand({}))).AvailabilityZones!.slice(0, zones);
  const subnets: TestSubnet[] = [];
  for (const [i, az] of azs.entries()) {
    const s = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.0.${i}.0/24`, AvailabilityZone: az.ZoneName }),
    );
    subnets.push({
      subnetId: s.Subnet!.SubnetId!,
      availabilityZone: az.ZoneName!,
      availabilityZoneId: az.ZoneId!,
    });
  }
  const sg = await ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: 'scratch',
      Description: 'scratch mount targets',
      VpcId: vpcId,
    }),
  );
  return { vpcId, securityGroupId: sg.GroupId!, subnets };
}

export interface ScratchFixture {
  readonly fleet?: string;
  readonly owner?: string;
  readonly job?: string;
  readonly extraTags?: Tag[];
  /** Subnet for a mount target; none when unset. */
  readonly mountTargetSubnet?: TestSubnet;
  readonly securityGroupId?: string;
}

/** Creates a One Zone file system tagged like mountfleet's scratch, optionally with a mount target. */
export async function createScratchFileSystem(
  efs: EFSClient,
  f: ScratchFixture,
  token: string,
): Promise<string> {
  const tags: Tag[] = [
    ...(f.fleet ? [{ Key: TAG_FLEET, Value: f.fleet }] : []),
    ...(f.owner ? [{ Key: TAG_OWNER_INSTANCE, Value: f.owner }] : []),
    ...(f.job ? [{ Key: TAG_JOB, Value: f.job }] : []),
    ...(f.extraTags ?? []),
  ];
  const fs = await efs.send(
    new CreateFileSystemCommand({
      CreationToken: token,
      Encrypted: true,
      Backup: false,
      ThroughputMode: 'bursting',
      AvailabilityZoneName: f.mountTargetSubnet?.availabilityZone ?? 'us-east-1a',
      Tags: tags,
    }),
  );
  if (f.mountTargetSubnet) {
    await efs.send(
      new CreateMountTargetCommand({
        FileSystemId: fs.FileSystemId,
        SubnetId: f.mountTargetSubnet.subnetId,
        ...(f.securityGroupId ? { SecurityGroups: [f.securityGroupId] } : {}),
      }),
    );
  }
  return fs.FileSystemId!;
}

/**
 * An agent config with one mount of each kind a tuning profile distinguishes (read-write mutable without a
 * cache, read-write immutable with metadata only, read-only mutable with local and Express caches), in
 * eu-west-1 with an Express bucket in euw1-az1 only.
 */
export function mixedMountsConfig(): AgentConfig {
  return parseAgentConfig({
    version: 1,
    fleetId: 'mixed',
    region: 'eu-west-1',
    mounts: [
      {
        bucket: 'outputs',
        prefix: 'runs/',
        path: '/mnt/out',
        access: 'read-write',
        dataset: 'mutable',
        cache: 'none',
      },
      {
        bucket: 'logs',
        prefix: 'raw/',
        path: '/mnt/logs',
        access: 'read-write',
        dataset: 'immutable',
        cache: 'metadata',
      },
      { bucket: 'features', path: '/mnt/features', dataset: 'mutable', cache: 'local+express' },
    ],
    expressCache: { buckets: { 'euw1-az1': 'cache--euw1-az1--x-s3' } },
  });
}
