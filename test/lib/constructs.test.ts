import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  ComputeFleet,
  ExpressCache,
  FleetNetwork,
  OrphanReaper,
  ScratchFileSystems,
  StorageDashboard,
  type ComputeFleetProps,
  type FleetMount,
} from '../../lib';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { agentUnit, AGENT_LAUNCHER_PATH } from '../../lib/private/user-data';
import { agentJsonOf, ensureBundles, fastApp, renderJoin, testStack, userDataOf } from './support';

beforeAll(ensureBundles);

const AZS = ['use1-az4', 'use1-az6'];

function fleetStack(
  overrides: Partial<ComputeFleetProps> = {},
  opts: { cacheAzIds?: string[]; networkAzIds?: string[] } = {},
) {
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: opts.networkAzIds ?? AZS });
  const expressCache = new ExpressCache(stack, 'Cache', { azIds: opts.cacheAzIds ?? AZS });
  const scratch = new ScratchFileSystems(stack, 'Scratch', { fleetId: 'train', network });
  const data = s3.Bucket.fromBucketName(stack, 'Data', 'my-datasets');
  const fleet = new ComputeFleet(stack, 'Fleet', {
    fleetId: 'train',
    network,
    expressCache,
    scratch,
    mounts: [
      { bucket: data, prefix: 'imagenet/', path: '/mnt/imagenet', dataset: 'immutable' },
      { bucket: data, prefix: 'outputs/', path: '/mnt/outputs', access: 'read-write', cache: 'none' },
    ],
    ...overrides,
  });
  return { stack, network, expressCache, scratch, fleet, template: () => Template.fromStack(stack) };
}

/** All policy statements attached to roles in a template. */
function statements(template: Template): Array<Record<string, unknown>> {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (p) =>
      (p as { Properties: { PolicyDocument: { Statement: Array<Record<string, unknown>> } } }).Properties
        .PolicyDocument.Statement,
  );
}

describe('FleetNetwork', () => {
  test('places one subnet per AZ ID with AvailabilityZoneId, and S3 + S3 Express gateway endpoints', () => {
    const stack = testStack();
    new FleetNetwork(stack, 'Network', { azIds: AZS });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EC2::Subnet', 2);
    for (const [i, azId] of AZS.entries()) {
      t.hasResourceProperties('AWS::EC2::Subnet', {
        AvailabilityZoneId: azId,
        CidrBlock: `10.64.${i * 16}.0/20`,
        AvailabilityZone: Match.absent(),
      });
    }
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      ServiceName: 'com.amazonaws.us-east-1.s3',
      VpcEndpointType: 'Gateway',
    });
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', { ServiceName: 'com.amazonaws.us-east-1.s3express' });
    t.resourceCountIs('AWS::EC2::NatGateway', 0);
  });

  test('isolated: only the VPC and subnets (no gateway, routes, endpoints or public IPs)', () => {
    const stack = testStack();
    new FleetNetwork(stack, 'Network', { azIds: AZS, isolated: true });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EC2::Subnet', 2);
    t.hasResourceProperties('AWS::EC2::Subnet', { MapPublicIpOnLaunch: false });
    for (const type of [
      'AWS::EC2::InternetGateway',
      'AWS::EC2::RouteTable',
      'AWS::EC2::Route',
      'AWS::EC2::VPCEndpoint',
    ]) {
      t.resourceCountIs(type, 0);
    }
  });

  test('rejects an AZ name, naming the construct, the field and the fix', () => {
    const stack = testStack();
    expect(() => new FleetNetwork(stack, 'Network', { azIds: ['us-east-1a'] })).toThrow(
      /^Test\/Network: azIds\[0\]: "us-east-1a" is not an AZ ID — "us-east-1a" is an AZ name.*use the AZ ID/,
    );
  });

  test('rejects an AZ ID of another Region', () => {
    expect(() => new FleetNetwork(testStack(), 'Network', { azIds: ['euw1-az1'] })).toThrow(
      /azIds\[0\]: "euw1-az1" is not in the stack's Region us-east-1 — AZ IDs of us-east-1 start with "use1-"/,
    );
  });

  test('imports an existing VPC and subnets by AZ ID without lookups', () => {
    const stack = testStack();
    const net = FleetNetwork.fromNetworkAttributes(stack, 'Net', {
      vpcId: 'vpc-0abc',
      subnetIds: { 'use1-az4': 'subnet-0abc' },
    });
    expect(net.subnets['use1-az4'].subnetId).toBe('subnet-0abc');
    expect(() =>
      FleetNetwork.fromNetworkAttributes(testStack(), 'Net', {
        vpcId: 'vpc-0abc',
        subnetIds: { 'use1-az4': 'sub-1' },
      }),
    ).toThrow(/subnetIds\.use1-az4: "sub-1" is not a subnet id/);
  });
});

describe('ExpressCache', () => {
  test('one encrypted single-zone directory bucket per AZ ID, with expiry, abort and metrics rules', () => {
    const stack = testStack();
    new ExpressCache(stack, 'Cache', { azIds: AZS, bucketBaseName: 'ml-cache' });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::S3Express::DirectoryBucket', 2);
    t.hasResource('AWS::S3Express::DirectoryBucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        BucketName: 'ml-cache--use1-az4--x-s3',
        DataRedundancy: 'SingleAvailabilityZone',
        LocationName: 'use1-az4',
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: {
          Rules: [
            { Id: 'ExpireCachedBlocks', Status: 'Enabled', ExpirationInDays: 7 },
            {
              Id: 'AbortIncompleteUploads',
              Status: 'Enabled',
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
            },
          ],
        },
        MetricsConfigurations: [{ Id: 'EntireBucket' }],
      },
    });
  });

  test('grantMountpointCache allows s3express:CreateSession on exactly the cache buckets', () => {
    const stack = testStack();
    const cache = new ExpressCache(stack, 'Cache', { azIds: AZS, removalPolicy: RemovalPolicy.DESTROY });
    const role = new iam.Role(stack, 'R', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
    cache.grantMountpointCache(role);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Action: 's3express:CreateSession',
            Effect: 'Allow',
            Resource: [
              { 'Fn::GetAtt': [Match.stringLikeRegexp('^Cacheuse1az4'), 'Arn'] },
              { 'Fn::GetAtt': [Match.stringLikeRegexp('^Cacheuse1az6'), 'Arn'] },
            ],
          },
        ],
      },
    });
    t.hasResource('AWS::S3Express::DirectoryBucket', { DeletionPolicy: 'Delete' });
  });

  test('fromBucketNames builds s3express bucket ARNs and checks each name against its zone', () => {
    const stack = testStack();
    const cache = ExpressCache.fromBucketNames(stack, 'Imported', {
      bucketNames: { 'use1-az4': 'c--use1-az4--x-s3' },
    });
    expect(stack.resolve(cache.bucketArn('use1-az4'))).toEqual({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':s3express:us-east-1:',
          { Ref: 'AWS::AccountId' },
          ':bucket/c--use1-az4--x-s3',
        ],
      ],
    });
    expect(() =>
      ExpressCache.fromBucketNames(testStack(), 'I', { bucketNames: { 'use1-az4': 'c--use1-az6--x-s3' } }),
    ).toThrow(/bucketNames\.use1-az4: "c--use1-az6--x-s3" is not in use1-az4/);
    expect(() => cache.bucketFor('use1-az1')).toThrow(/bucketFor\(use1-az1\): no cache bucket in use1-az1/);
  });

  test('rejects an over-long bucket name at synth', () => {
    expect(
      () => new ExpressCache(testStack(), 'Cache', { azIds: ['use1-az4'], bucketBaseName: 'a'.repeat(50) }),
    ).toThrow(
      /^Test\/Cache: bucketBaseName: bucket name "a{50}--use1-az4--x-s3" is 66 characters — directory bucket names have 63 at most/,
    );
  });

  test('rejects a bad base name, a duplicate AZ ID and a fractional expiry', () => {
    expect(() => new ExpressCache(testStack(), 'C', { azIds: AZS, bucketBaseName: 'Bad_Name' })).toThrow(
      /bucketBaseName: "Bad_Name" is not a valid base name/,
    );
    expect(() => new ExpressCache(testStack(), 'C', { azIds: AZS, bucketBaseName: 'a--b' })).toThrow(
      /contains "--"/,
    );
    expect(() => new ExpressCache(testStack(), 'C', { azIds: ['use1-az4', 'use1-az4'] })).toThrow(
      /azIds\[1\]: "use1-az4" is listed twice/,
    );
    expect(() => new ExpressCache(testStack(), 'C', { azIds: AZS, expiration: Duration.hours(36) })).toThrow(
      /expiration: 1 day 12 hours is not a whole number of days/,
    );
  });
});

describe('ComputeFleet', () => {
  test('launch template: IMDSv2 required, hop limit 1, encrypted gp3 root, Amazon Linux 2023', () => {
    const t = fleetStack().template();
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: {
        MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1, HttpEndpoint: 'enabled' },
        BlockDeviceMappings: [
          {
            DeviceName: '/dev/xvda',
            Ebs: { Encrypted: true, VolumeType: 'gp3', VolumeSize: 30, DeleteOnTermination: true },
          },
        ],
      },
    });
    const params = t.toJSON().Parameters as Record<string, { Default?: string }>;
    expect(Object.values(params).map((p) => p.Default)).toContain(
      '/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-x86_64',
    );
  });

  test('Auto Scaling group: all Spot, price-capacity-optimized, mixed types, only the cache zones, teardown hook', () => {
    const { template } = fleetStack(
      {},
      { networkAzIds: ['use1-az4', 'use1-az6', 'use1-az1'], cacheAzIds: AZS },
    );
    const t = template();
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      MinSize: '0',
      MaxSize: '4',
      CapacityRebalance: true,
      MixedInstancesPolicy: {
        InstancesDistribution: {
          OnDemandBaseCapacity: 0,
          OnDemandPercentageAboveBaseCapacity: 0,
          SpotAllocationStrategy: 'price-capacity-optimized',
        },
        LaunchTemplate: {
          Overrides: [
            { InstanceType: 'm6i.large' },
            { InstanceType: 'm6a.large' },
            { InstanceType: 'm5.large' },
            { InstanceType: 'm7i.large' },
          ],
        },
      },
      VPCZoneIdentifier: [
        { Ref: Match.stringLikeRegexp('^NetworkSubnetuse1az4') },
        { Ref: Match.stringLikeRegexp('^NetworkSubnetuse1az6') },
      ],
      Tags: Match.arrayWith([{ Key: 'mountfleet:fleet', Value: 'train', PropagateAtLaunch: true }]),
    });
    t.hasResourceProperties('AWS::AutoScaling::LifecycleHook', {
      LifecycleHookName: 'mountfleet-train-teardown',
      LifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING',
      HeartbeatTimeout: 600,
      DefaultResult: 'CONTINUE',
    });
  });

  test('security groups: the scratch group admits TCP 2049 from the fleet group only; the fleet has no ingress', () => {
    const t = fleetStack().template();
    t.resourceCountIs('AWS::EC2::SecurityGroupIngress', 1);
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp',
      FromPort: 2049,
      ToPort: 2049,
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ScratchSecurityGroup'), 'GroupId'] },
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetSecurityGroup'), 'GroupId'] },
    });
    const groups = t.findResources('AWS::EC2::SecurityGroup');
    for (const g of Object.values(groups) as Array<{ Properties: { SecurityGroupIngress?: unknown[] } }>) {
      expect(g.Properties.SecurityGroupIngress ?? []).toEqual([]);
    }
  });

  test('instance role: read-only on exactly the mounted prefix, read-write adds writes there only', () => {
    const all = statements(fleetStack().template());
    const list = all.filter((s) => s.Action === 's3:ListBucket');
    expect(list.map((s) => s.Condition)).toEqual([
      { StringLike: { 's3:prefix': ['imagenet/', 'imagenet/*'] } },
      { StringLike: { 's3:prefix': ['outputs/', 'outputs/*'] } },
    ]);
    const reads = all.find(
      (s) => s.Action === 's3:GetObject' && JSON.stringify(s.Resource).includes('imagenet/*'),
    );
    expect(reads).toBeDefined();
    const writes = all.find(
      (s) => Array.isArray(s.Action) && (s.Action as string[]).includes('s3:PutObject'),
    );
    expect(writes?.Action).toEqual([
      's3:GetObject',
      's3:PutObject',
      's3:AbortMultipartUpload',
      's3:DeleteObject',
    ]);
    expect(JSON.stringify(writes?.Resource)).toContain(':s3:::my-datasets/outputs/*');
    expect(JSON.stringify(all)).not.toMatch(/"s3:\*"|"s3:List\*"|"s3:GetObject\*"/);
  });

  test('instance role: CreateSession on the cache, termination hook only for its own group, tuning reads', () => {
    const all = statements(fleetStack().template());
    expect(all.find((s) => s.Action === 's3express:CreateSession')).toBeDefined();
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: ['autoscaling:CompleteLifecycleAction', 'autoscaling:RecordLifecycleActionHeartbeat'],
        Condition: { StringEquals: { 'autoscaling:ResourceTag/mountfleet:fleet': 'train' } },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: ['ec2:DescribeInstanceTypes', 'autoscaling:DescribeAutoScalingInstances'],
        Resource: '*',
      }),
    );
  });

  test('instance role: PutMetricData only to the Mountpoint namespace, log streams only in its own log group', () => {
    const t = fleetStack().template();
    const all = statements(t);
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: 'cloudwatch:PutMetricData',
        Resource: '*',
        Condition: { StringEquals: { 'cloudwatch:namespace': 'Mountfleet/Mountpoint' } },
      }),
    );
    expect(all.filter((s) => JSON.stringify(s.Action).includes('cloudwatch:'))).toHaveLength(1);
    // The CloudWatch agent reads the group name for its AutoScalingGroupName dimension.
    expect(all).toContainEqual(expect.objectContaining({ Action: 'ec2:DescribeTags', Resource: '*' }));
    const logGroupId = Object.keys(t.findResources('AWS::Logs::LogGroup'))[0];
    const logStatements = all.filter((s) => JSON.stringify(s.Action).includes('logs:'));
    expect(logStatements).toEqual([
      expect.objectContaining({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'] }),
    ]);
    expect(renderJoin(logStatements[0].Resource)).toBe(
      `arn:<Ref:AWS::Partition>:logs:us-east-1:<Ref:AWS::AccountId>:log-group:<Ref:${logGroupId}>:log-stream:*`,
    );
  });

  test('the metrics log group the agent ships to is created with retention, deleted with the stack, before the group', () => {
    const t = fleetStack().template();
    t.resourceCountIs('AWS::Logs::LogGroup', 1);
    t.hasResource('AWS::Logs::LogGroup', {
      Properties: { LogGroupName: '/mountfleet/train/agent-metrics', RetentionInDays: 30 },
      DeletionPolicy: 'Delete',
    });
    const logGroupId = Object.keys(t.findResources('AWS::Logs::LogGroup'))[0];
    t.hasResource('AWS::AutoScaling::AutoScalingGroup', { DependsOn: Match.arrayWith([logGroupId]) });
    fleetStack({ metricsLogRetention: RetentionDays.ONE_WEEK })
      .template()
      .hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  test('user data installs the agent bundle and writes an agent.json the agent schema accepts', () => {
    const t = fleetStack().template();
    const script = userDataOf(t);
    expect(script).toContain('dnf install -y nodejs22');
    expect(script).toMatch(/aws s3 cp 's3:\/\/.*\.js' '\/opt\/mountfleet\/mountfleet\.js'/);
    expect(script).toContain('systemctl enable --now mountfleet-agent.service');
    const agent = agentJsonOf(t);
    expect(agent).toMatchObject({
      version: 1,
      fleetId: 'train',
      region: 'us-east-1',
      mounts: [
        {
          bucket: 'my-datasets',
          prefix: 'imagenet/',
          path: '/mnt/imagenet',
          access: 'read-only',
          dataset: 'immutable',
          cache: 'local+express',
        },
        {
          bucket: 'my-datasets',
          prefix: 'outputs/',
          path: '/mnt/outputs',
          access: 'read-write',
          dataset: 'mutable',
          cache: 'none',
        },
      ],
      expressCache: {
        buckets: {
          'use1-az4': expect.stringMatching(/^<Ref:Cacheuse1az4/),
          'use1-az6': expect.stringMatching(/^<Ref:Cacheuse1az6/),
        },
      },
      scratch: {
        securityGroupId: expect.stringMatching(/^<GetAtt:ScratchSecurityGroup.*\.GroupId>$/),
        subnets: {
          'use1-az4': expect.stringMatching(/^<Ref:NetworkSubnetuse1az4/),
          'use1-az6': expect.stringMatching(/^<Ref:NetworkSubnetuse1az6/),
        },
        path: '/mnt/scratch',
        teardownGraceSeconds: 20,
      },
      lifecycleHook: { name: 'mountfleet-train-teardown' },
    });
  });

  test('the agent unit passes systemd-analyze verify', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-unit-'));
    const unit = join(dir, 'mountfleet-agent.service');
    // The launcher exists only on instances: verify against a stand-in executable.
    const launcher = join(dir, 'mountfleet');
    writeFileSync(launcher, '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(unit, agentUnit().replaceAll(AGENT_LAUNCHER_PATH, launcher));
    const result = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(result.stderr.split('\n').filter((l) => l.includes('mountfleet-agent'))).toEqual([]);
    expect(result.status).toBe(0);
  });

  test('Graviton instance types get the arm64 AMI; mixed architectures are refused', () => {
    const t = fleetStack({ instanceTypes: ['c7g.xlarge', 'm6gd.large'] }).template();
    const params = t.toJSON().Parameters as Record<string, { Default?: string }>;
    expect(Object.values(params).map((p) => p.Default)).toContain(
      '/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.1-arm64',
    );
    expect(() => fleetStack({ instanceTypes: ['c7g.xlarge', 'c6i.xlarge'] })).toThrow(
      /instanceTypes: mixes arm64 and x86_64 types/,
    );
  });

  const mount = (m: Partial<FleetMount> & { path: string }, stack: Stack): FleetMount => ({
    bucket: s3.Bucket.fromBucketName(stack, `B${m.path.replace(/\W/g, '')}`, 'my-datasets'),
    ...m,
  });

  test.each([
    [
      'a bad fleet id',
      { fleetId: 'Bad_Fleet' },
      /^Test\/Fleet: fleetId: fleet id "Bad_Fleet" must be 1-32 characters/,
    ],
    [
      'nested mount paths',
      { mounts: 'nested' },
      /^Test\/Fleet: invalid agent config from the construct props:\n {2}mounts\.1\.path: conflicts with mounts\[0\]\.path \/mnt\/data/,
    ],
    [
      'a read-write mount without a prefix',
      { mounts: 'rw-root' },
      /mounts\.0\.prefix: a read-write mount needs a prefix/,
    ],
    [
      'a relative mount path',
      { mounts: 'relative' },
      /^Test\/Fleet: mounts\[0\]\.path: must be an absolute path/,
    ],
    [
      'a zone the network has no subnet in',
      { azIds: ['use1-az4', 'use1-az1'] },
      /azIds\[1\]: the network has no subnet in use1-az1/,
    ],
    ['an empty zone list', { azIds: [] }, /^Test\/Fleet: azIds: must name at least one AZ ID/],
    [
      'a zone listed twice',
      { azIds: ['use1-az4', 'use1-az4'] },
      /^Test\/Fleet: azIds\[1\]: "use1-az4" is listed twice — list each AZ ID once/,
    ],
    [
      'an AZ name instead of an AZ ID',
      { azIds: ['us-east-1a'] },
      /^Test\/Fleet: azIds\[0\]: "us-east-1a" is not an AZ ID — "us-east-1a" is an AZ name/,
    ],
    [
      'min above max',
      { minCapacity: 5, maxCapacity: 2 },
      /minCapacity: 5 is above maxCapacity 2 — raise maxCapacity/,
    ],
    [
      'a malformed instance type',
      { instanceTypes: ['large'] },
      /instanceTypes\[0\]: "large" is not an instance type/,
    ],
  ])('rejects %s', (_name, overrides, message) => {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: AZS });
    const expressCache = new ExpressCache(stack, 'Cache', { azIds: AZS });
    const o = overrides as Record<string, unknown>;
    const mounts =
      o.mounts === 'nested'
        ? [mount({ path: '/mnt/data' }, stack), mount({ path: '/mnt/data/sub', prefix: 'x/' }, stack)]
        : o.mounts === 'rw-root'
          ? [mount({ path: '/mnt/out', access: 'read-write' }, stack)]
          : o.mounts === 'relative'
            ? [mount({ path: 'mnt/data' }, stack)]
            : [];
    expect(
      () =>
        new ComputeFleet(stack, 'Fleet', {
          fleetId: 'train',
          network,
          expressCache,
          ...(o as object),
          mounts,
        }),
    ).toThrow(message);
  });

  test.each([
    // The prefix becomes the role's grant on bucket/<prefix>*: a wildcard in it would reach other prefixes.
    [
      'a wildcard prefix',
      { path: '/mnt/out', prefix: 'team-*/', access: 'read-write' as const },
      /^Test\/Fleet: mounts\[0\]\.prefix: must not contain "\*" or "\?"/,
    ],
    ['a "?" in the prefix', { path: '/mnt/in', prefix: 'run-?/' }, /mounts\[0\]\.prefix: must not contain/],
    ['a system directory', { path: '/etc' }, /^Test\/Fleet: mounts\[0\]\.path: "\/etc" is in the system/],
    ['the root directory', { path: '/' }, /^Test\/Fleet: mounts\[0\]\.path: "\/" is a system directory/],
    ['a newline', { path: '/mnt/a\nb' }, /^Test\/Fleet: mounts\[0\]\.path: must not contain control/],
    ['a ".." segment', { path: '/mnt/../etc' }, /^Test\/Fleet: mounts\[0\]\.path: must not contain "\."/],
    ['a path the old pattern backtracked on', { path: `/${'a'.repeat(28)}//` }, /must not contain empty/],
  ])('rejects a mount with %s, in milliseconds', (_name, m, message) => {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: AZS });
    const started = Date.now();
    expect(
      () => new ComputeFleet(stack, 'Fleet', { fleetId: 'train', network, mounts: [mount(m, stack)] }),
    ).toThrow(message);
    expect(Date.now() - started).toBeLessThan(200);
  });

  test('rejects an Express cache policy without a cache, and a fleet zone the cache does not cover', () => {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: AZS });
    const bucket = s3.Bucket.fromBucketName(stack, 'B', 'my-datasets');
    expect(
      () =>
        new ComputeFleet(stack, 'F1', {
          fleetId: 'a',
          network,
          mounts: [{ bucket, path: '/mnt/d', cache: 'express' }],
        }),
    ).toThrow(
      /mounts\[0\]\.cache: "express" needs an Express cache — pass expressCache or use cache "local"/,
    );
    const expressCache = new ExpressCache(stack, 'Cache', { azIds: ['use1-az4'] });
    expect(() => new ComputeFleet(stack, 'F2', { fleetId: 'a', network, expressCache, azIds: AZS })).toThrow(
      /azIds\[1\]: use1-az6 has no Express cache bucket — add it to the cache/,
    );
  });
});

describe('ScratchFileSystems', () => {
  test('tag-scoped IAM: create only tagged and encrypted, manage only own-fleet, deny untagged', () => {
    const all = statements(fleetStack().template());
    expect(all).toContainEqual({
      Action: 'elasticfilesystem:CreateFileSystem',
      Effect: 'Allow',
      Resource: '*',
      Condition: {
        StringEquals: { 'aws:RequestTag/mountfleet:fleet': 'train' },
        'ForAllValues:StringEquals': {
          'aws:TagKeys': ['mountfleet:fleet', 'mountfleet:owner-instance', 'mountfleet:job', 'Name'],
        },
        Bool: { 'elasticfilesystem:Encrypted': 'true' },
      },
    });
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: 'elasticfilesystem:TagResource',
        Condition: {
          StringEquals: {
            'elasticfilesystem:CreateAction': 'CreateFileSystem',
            'aws:RequestTag/mountfleet:fleet': 'train',
          },
        },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: [
          'elasticfilesystem:CreateMountTarget',
          'elasticfilesystem:DescribeMountTargets',
          'elasticfilesystem:DeleteMountTarget',
          'elasticfilesystem:DeleteFileSystem',
        ],
        Condition: { StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' } },
      }),
    );
    expect(all).toContainEqual({
      Action: [
        'elasticfilesystem:CreateMountTarget',
        'elasticfilesystem:DeleteMountTarget',
        'elasticfilesystem:DeleteFileSystem',
      ],
      Effect: 'Deny',
      Resource: '*',
      Condition: { Null: { 'aws:ResourceTag/mountfleet:fleet': 'true' } },
    });
    const eni = all.find((s) => JSON.stringify(s.Action).includes('ec2:DeleteNetworkInterface'));
    expect(eni?.Condition).toEqual({ ArnEquals: { 'ec2:Subnet': expect.any(Array) } });
  });

  test('the mount-target group has no outbound rule and no ingress except the fleet', () => {
    const t = fleetStack().template();
    const [[scratchGroupId, scratchGroup]] = Object.entries(
      t.findResources('AWS::EC2::SecurityGroup', {
        Properties: { GroupDescription: Match.stringLikeRegexp('EFS scratch mount targets of fleet train') },
      }),
    ) as Array<[string, { Properties: Record<string, unknown> }]>;
    // CDK's placeholder for "no egress": a rule to an address that cannot exist.
    expect(scratchGroup.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '255.255.255.255/32' }),
    ]);
    expect(scratchGroup.Properties.SecurityGroupIngress).toBeUndefined();
    const ingress = Object.values(
      t.findResources('AWS::EC2::SecurityGroupIngress', {
        Properties: { GroupId: { 'Fn::GetAtt': [scratchGroupId, 'GroupId'] } },
      }),
    ) as Array<{ Properties: Record<string, unknown> }>;
    expect(ingress.map((rule) => rule.Properties)).toEqual([
      expect.objectContaining({
        FromPort: 2049,
        ToPort: 2049,
        SourceSecurityGroupId: { 'Fn::GetAtt': [expect.stringMatching(/^FleetSecurityGroup/), 'GroupId'] },
      }),
    ]);
  });

  test('lets a re-run move mountfleet:owner-instance and a teardown mark its start on its own fleet file systems, and nothing else', () => {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4'] });
    const scratch = new ScratchFileSystems(stack, 'Scratch', { fleetId: 'train', network });
    const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
    scratch.grantCreateAndDelete(role);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 'elasticfilesystem:TagResource',
            Effect: 'Allow',
            Resource: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':elasticfilesystem:us-east-1:',
                  { Ref: 'AWS::AccountId' },
                  ':file-system/*',
                ],
              ],
            },
            Condition: {
              StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' },
              'ForAllValues:StringEquals': {
                'aws:TagKeys': ['mountfleet:owner-instance', 'mountfleet:teardown-started-at'],
              },
              Null: { 'aws:TagKeys': 'false' },
            },
          },
        ]),
      },
    });
  });

  test('rejects a bad fleet id and knows its agent settings', () => {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: AZS });
    expect(() => new ScratchFileSystems(stack, 'S', { fleetId: '-x', network })).toThrow(
      /^Test\/S: fleetId: fleet id "-x" .* — for example "training"$/,
    );
    expect(() => new ScratchFileSystems(stack, 'S1', { fleetId: 'x', network, mountPath: '/tmp' })).toThrow(
      /^Test\/S1: mountPath: "\/tmp" is a system directory/,
    );
    const s = new ScratchFileSystems(stack, 'S2', {
      fleetId: 'x',
      network,
      teardownGrace: Duration.seconds(45),
      mountPath: '/scratch',
    });
    expect(Object.keys(s.agentSettings().subnets)).toEqual(AZS);
    expect(s.agentSettings()).toMatchObject({ path: '/scratch', teardownGraceSeconds: 45 });
  });
});

describe('StorageDashboard', () => {
  test('rejects a bad fleet id with the fix', () => {
    expect(() => new StorageDashboard(testStack(), 'Dashboard', { fleetId: 'my_fleet' })).toThrow(
      /^Test\/Dashboard: fleetId: fleet id "my_fleet" .* — for example "training"$/,
    );
  });

  test("charts Mountpoint's cache hits, S3 latency and errors and FUSE latency from the fleet's namespace", () => {
    const { stack, fleet, template } = fleetStack();
    new StorageDashboard(stack, 'Dashboard', { fleetId: 'train', fleet });
    const t = template();
    t.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardBody: Match.objectLike({}) });
    const [dashboard] = Object.values(t.findResources('AWS::CloudWatch::Dashboard')) as Array<{
      Properties: { DashboardBody: unknown };
    }>;
    const body = JSON.parse(renderJoin(dashboard.Properties.DashboardBody)) as {
      widgets: Array<{ properties: { title: string; metrics: unknown[][] } }>;
    };
    const group = `<Ref:${Object.keys(t.findResources('AWS::AutoScaling::AutoScalingGroup'))[0]}>`;
    const metricsOf = (title: RegExp) =>
      body.widgets.find((w) => title.test(w.properties.title))!.properties.metrics;
    const ns = 'Mountfleet/Mountpoint';
    /** One metric line of a widget: namespace, name, Mountpoint's dimensions, the group, the statistic. */
    const metric = (name: string, dimensions: string[], stat: string) =>
      expect.arrayContaining([
        ns,
        name,
        ...dimensions,
        'AutoScalingGroupName',
        group,
        expect.objectContaining({ stat }),
      ]);
    expect(metricsOf(/served from a cache/)).toEqual(
      expect.arrayContaining([
        metric('experimental.fuse.cache_hit', [], 'Sum'),
        metric('fuse.request_latency', ['fuse_request', 'read'], 'SampleCount'),
      ]),
    );
    expect(metricsOf(/first-byte latency/)).toEqual([
      metric('s3.request_first_byte_latency', ['s3_request', 'GetObject'], 'p50'),
      metric('s3.request_first_byte_latency', ['s3_request', 'GetObject'], 'p99'),
    ]);
    expect(JSON.stringify(metricsOf(/S3 errors/))).toContain(
      `SEARCH('{${ns},AutoScalingGroupName,http_status,s3_request} MetricName=\\"s3.request_errors\\" AutoScalingGroupName=\\"${group}\\"', 'Sum', 300)`,
    );
    expect(metricsOf(/FUSE read latency/)).toEqual([
      metric('fuse.request_latency', ['fuse_request', 'read'], 'p50'),
      metric('fuse.request_latency', ['fuse_request', 'read'], 'p99'),
    ]);
  });

  test('the stack dashboard has the Mountpoint widgets beside the scratch and reaper widgets', () => {
    const [config] = resolveAppConfig({}, '(test)');
    const stack = new MountfleetStack(fastApp(), config.stackName, { config });
    const [dashboard] = Object.values(
      Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'),
    ) as Array<{
      Properties: { DashboardBody: unknown };
    }>;
    const titles = (
      JSON.parse(renderJoin(dashboard.Properties.DashboardBody)) as {
        widgets: Array<{ properties: { title: string } }>;
      }
    ).widgets.map((w) => w.properties.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Mountpoint reads served from a cache (local or Express)',
        'Mountpoint S3 errors (by request and HTTP status)',
        'Mountpoint S3 first-byte latency, GetObject (microseconds)',
        'Mountpoint FUSE read latency (microseconds)',
        'Scratch file systems alive (seen per reaper run)',
        'Reaper decisions',
      ]),
    );
  });
});

describe('OrphanReaper', () => {
  function reaper(props: Partial<ConstructorParameters<typeof OrphanReaper>[2]> = {}) {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: AZS });
    new OrphanReaper(stack, 'Reaper', { fleetId: 'train', network, ...props });
    return Template.fromStack(stack);
  }

  test('the pre-built bundle on NODEJS_22_X with the environment the handler reads', () => {
    reaper({ dryRun: true, maxDeletionsPerRun: 7 }).hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      DeadLetterConfig: { TargetArn: Match.anyValue() },
      Environment: {
        Variables: {
          MOUNTFLEET_FLEET_ID: 'train',
          MOUNTFLEET_DRY_RUN: 'true',
          MOUNTFLEET_GRACE_MINUTES: '30',
          MOUNTFLEET_IDLE_WINDOW_MINUTES: '30',
          MOUNTFLEET_METRIC_LAG_MINUTES: '5',
          MOUNTFLEET_MAX_DELETIONS_PER_RUN: '7',
          MOUNTFLEET_DEADLINE_MARGIN_SECONDS: '60',
        },
      },
    });
  });

  test('schedule every 15 minutes, Spot interruption and termination rules, encrypted DLQ, log retention', () => {
    const t = reaper();
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(15 minutes)' });
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
    });
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ec2'],
        'detail-type': ['EC2 Instance State-change Notification'],
        detail: { state: ['terminated'] },
      },
    });
    t.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1209600,
    });
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  test('alarms on errors, deletion bursts and dead letters — none when turned off', () => {
    const t = reaper({ deletionAlarmThreshold: 12 });
    t.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Mountfleet',
      MetricName: 'Deleted',
      Dimensions: [{ Name: 'Fleet', Value: 'train' }],
      Threshold: 12,
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 0,
    });
    reaper({ alarms: false }).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });

  test('role: deletes and marks only with the fleet tag, explicit deny when untagged, read evidence', () => {
    const all = statements(reaper());
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: ['elasticfilesystem:DeleteMountTarget', 'elasticfilesystem:DeleteFileSystem'],
        Condition: { StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' } },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: ['elasticfilesystem:TagResource', 'elasticfilesystem:UntagResource'],
        Condition: {
          StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' },
          'ForAllValues:StringEquals': { 'aws:TagKeys': ['mountfleet:marked-idle-at'] },
          Null: { 'aws:TagKeys': 'false' },
        },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: [
          'elasticfilesystem:DeleteMountTarget',
          'elasticfilesystem:DeleteFileSystem',
          'elasticfilesystem:TagResource',
          'elasticfilesystem:UntagResource',
        ],
        Condition: { Null: { 'aws:ResourceTag/mountfleet:fleet': 'true' } },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: [
          'elasticfilesystem:DescribeFileSystems',
          'elasticfilesystem:DescribeMountTargets',
          'cloudwatch:GetMetricData',
          'ec2:DescribeInstances',
        ],
        Resource: '*',
      }),
    );
    // Batched marks: the Tagging API has no resource type; the EFS statement above confines each ARN.
    expect(all).toContainEqual(
      expect.objectContaining({ Action: ['tag:TagResources', 'tag:UntagResources'], Resource: '*' }),
    );
    // No reaper code (evidence or teardown) reads network interfaces.
    expect(JSON.stringify(all)).not.toContain('ec2:DescribeNetworkInterfaces');
    const eni = all.find((s) => s.Action === 'ec2:DeleteNetworkInterface');
    expect(eni?.Condition).toEqual({ ArnEquals: { 'ec2:Subnet': expect.any(Array) } });
    expect(JSON.stringify(all)).not.toMatch(/elasticfilesystem:\*|"Action":"\*"/);
  });

  test('reaper.scheduleMinutes sets the schedule, the deletion alarm period and metricDecision', () => {
    const [config] = resolveAppConfig({ reaper: { scheduleMinutes: 60 } }, '(test)');
    const stack = new MountfleetStack(fastApp(), config.stackName, { config });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 hour)' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Deleted', Period: 3600 });
    expect(stack.reaper.metricDecision('Marked').period.toMinutes()).toBe(60);
    reaper().hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Deleted', Period: 900 });
  });

  test('rejects a schedule interval that is no alarm period', () => {
    expect(() => reaper({ scheduleInterval: Duration.seconds(90) })).toThrow(/scheduleInterval: 1 minute 30/);
    expect(() => reaper({ scheduleInterval: Duration.days(2) })).toThrow(/scheduleInterval: 2 days/);
  });

  test('rejects a bad fleet id with the fix', () => {
    expect(() => reaper({ fleetId: 'Train' })).toThrow(
      /^Test\/Reaper: fleetId: fleet id "Train" .* — for example "training"$/,
    );
  });

  test.each([
    [
      'maxDeletionsPerRun above the Lambda limit',
      { maxDeletionsPerRun: 1001 },
      /maxDeletionsPerRun: 1001 must be at most 1000 — allowed: 1 to 1000$/,
    ],
    [
      'maxDeletionsPerRun of zero',
      { maxDeletionsPerRun: 0 },
      /maxDeletionsPerRun: 0 must be at least 1 — allowed: 1 to 1000$/,
    ],
    [
      'a fractional maxDeletionsPerRun',
      { maxDeletionsPerRun: 2.5 },
      /maxDeletionsPerRun: 2.5 must be a whole number — allowed: 1 to 1000$/,
    ],
    [
      'an idle window under 5 minutes',
      { idleWindow: Duration.minutes(4) },
      /idleWindow: 4 minutes must be at least 5 — allowed: 5 to 1440 minutes$/,
    ],
    [
      'an idle window over a day',
      { idleWindow: Duration.hours(25) },
      /idleWindow: 1500 minutes must be at most 1440 — allowed: 5 to 1440 minutes$/,
    ],
    [
      'a grace period over a week',
      { gracePeriod: Duration.days(8) },
      /gracePeriod: 11520 minutes must be at most 10080 — allowed: 0 to 10080 minutes$/,
    ],
    [
      'a metric lag over an hour',
      { metricLag: Duration.minutes(61) },
      /metricLag: 61 minutes must be at most 60 — allowed: 0 to 60 minutes$/,
    ],
    [
      'a deadline margin over 15 minutes',
      { deadlineMargin: Duration.minutes(16), timeout: Duration.minutes(20) },
      /deadlineMargin: 960 seconds must be at most 900 — allowed: 0 to 900 seconds$/,
    ],
    [
      'a grace period of 90 seconds',
      { gracePeriod: Duration.seconds(90) },
      /gracePeriod: 1 minute 30 seconds is not a whole number of minutes/,
    ],
    [
      'an idle window of 90 seconds',
      { idleWindow: Duration.seconds(90) },
      /idleWindow: 1 minute 30 seconds is not a whole number of minutes/,
    ],
    [
      'a metric lag of 30 seconds',
      { metricLag: Duration.seconds(30) },
      /metricLag: 30 seconds is not a whole number of minutes/,
    ],
  ])('rejects %s at synth, as the Lambda would on every run', (_name, props, message) => {
    expect(() => reaper(props)).toThrow(new RegExp(`^Test/Reaper: ${message.source}`));
  });

  test('rejects a deadline margin that does not fit the timeout', () => {
    expect(() => reaper({ timeout: Duration.seconds(30) })).toThrow(
      /deadlineMargin: 1 minute leaves no time in a 30 seconds timeout/,
    );
  });
});
