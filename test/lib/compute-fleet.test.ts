import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ComputeFleet, ExpressCache, FleetNetwork, type FleetMount } from '../../lib';
import { agentUnit, AGENT_LAUNCHER_PATH } from '../../lib/private/user-data';
import { fleetStack } from './fleet-fixture';
import { AZS, agentJsonOf, ensureBundles, renderJoin, statements, testStack, userDataOf } from './support';

beforeAll(ensureBundles);

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
    // PutMetricData once (the Mountpoint namespace); GetMetricData is the scratch credit guard's read.
    expect(all.filter((s) => JSON.stringify(s.Action).includes('cloudwatch:PutMetricData'))).toHaveLength(1);
    expect(
      all
        .filter((s) => JSON.stringify(s.Action).includes('cloudwatch:'))
        .map((s) => s.Action)
        .sort(),
    ).toEqual(['cloudwatch:GetMetricData', 'cloudwatch:PutMetricData']);
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
      /^Test\/Fleet: agent\.json: invalid agent config from the construct props:\n {2}mounts\.1\.path: conflicts with mounts\[0\]\.path \/mnt\/data/,
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
