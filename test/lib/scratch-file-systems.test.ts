import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  BATCH_SCRATCH_CREATE_TAG_KEYS,
  BATCH_SCRATCH_SUBMIT_TAG_KEYS,
  SCRATCH_CREATE_TAG_KEYS,
} from '../../core/contract';
import { FleetNetwork, ScratchFileSystems } from '../../lib';
import { batchFleetStack } from './batch-fleet-fixture';
import { policyOfRole } from './batch-iam-evaluator';
import { fleetStack } from './fleet-fixture';
import { AZS, ensureBundles, statements, testStack, type Statement } from './support';

beforeAll(ensureBundles);

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
          'aws:TagKeys': [
            'mountfleet:fleet',
            'mountfleet:owner-instance',
            'mountfleet:job',
            'mountfleet:run',
            'Name',
          ],
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
        'elasticfilesystem:UpdateFileSystem',
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

  test("lets a teardown mark its start on its own fleet file systems, and retag nothing else (no run ever takes over another run's file system)", () => {
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
                'aws:TagKeys': ['mountfleet:teardown-started-at'],
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

  test('imported scratch gives a fleet the same agent settings, IAM and NFS rule as a new one', () => {
    const built = fleetStack();
    const imported = fleetStack({}, {}, (stack, network) =>
      ScratchFileSystems.fromScratchFileSystemsAttributes(stack, 'Scratch', {
        fleetId: 'train',
        securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'ScratchGroup', 'sg-0123abcd'),
        subnets: network.subnets,
      }),
    );
    const settings = (f: ReturnType<typeof fleetStack>) => ({
      ...f.scratch.agentSettings(),
      securityGroupId: undefined,
    });
    expect(Stack.of(imported.fleet).resolve(settings(imported))).toEqual(
      Stack.of(built.fleet).resolve(settings(built)),
    );
    expect(imported.scratch.agentSettings().securityGroupId).toBe('sg-0123abcd');
    // The same statements, but for the security group's ARN (a Ref to the new group, the imported id).
    const withoutGroup = (t: Template) =>
      statements(t).map((st) =>
        Array.isArray(st.Resource)
          ? { ...st, Resource: st.Resource.filter((r) => !JSON.stringify(r).includes('security-group/')) }
          : st,
      );
    expect(withoutGroup(imported.template())).toEqual(withoutGroup(built.template()));
    imported.template().hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp',
      FromPort: 2049,
      ToPort: 2049,
      GroupId: 'sg-0123abcd',
    });
    expect(() =>
      ScratchFileSystems.fromScratchFileSystemsAttributes(testStack(), 'S', {
        fleetId: 'x',
        securityGroup: ec2.SecurityGroup.fromSecurityGroupId(testStack(), 'G', 'sg-0123abcd'),
        subnets: {},
      }),
    ).toThrow(/^Test\/S: subnets: has no subnet — give one subnet per AZ ID the fleet runs in$/);
  });
});

describe("who makes a run's file system", () => {
  /** The statements about file systems, their mount targets' interfaces and the scratch key. */
  const scratchStatements = (policy: Statement[]) =>
    policy.filter((st) =>
      [st.Action]
        .flat()
        .some((a) => /^(elasticfilesystem|kms|cloudwatch):|^ec2:(Create|Delete)NetworkInterface$/.test(a)),
    );
  const createTagKeys = (policy: Statement[]) =>
    policy
      .filter((st) => st.Action === 'elasticfilesystem:CreateFileSystem')
      .map((st) => (st.Condition as Record<string, Record<string, unknown>>)['ForAllValues:StringEquals']);
  const without = (policy: Statement[], others: Statement[]) =>
    policy.filter((st) => !others.some((o) => JSON.stringify(o) === JSON.stringify(st)));

  test("an instance's agent and a Batch fleet's functions get one grant: they differ in the create keys, the job's tags and the credit guard, and both use the scratch key", () => {
    const { stack, scratch, template } = batchFleetStack({}, { scratchKey: true });
    const instanceRole = new iam.Role(stack, 'Instance', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
    });
    scratch!.grantCreateAndDelete(instanceRole);
    const t = template();
    const instance = scratchStatements(policyOfRole(t, 'Instance'));
    const runner = scratchStatements(policyOfRole(t, 'FleetSubmitRole'));

    expect(createTagKeys(instance)).toEqual([{ 'aws:TagKeys': [...SCRATCH_CREATE_TAG_KEYS] }]);
    expect(createTagKeys(runner)).toEqual([{ 'aws:TagKeys': [...BATCH_SCRATCH_CREATE_TAG_KEYS] }]);
    const onlyInstance = without(instance, runner).map((st) => st.Action);
    expect(onlyInstance).toEqual([
      'elasticfilesystem:CreateFileSystem',
      'elasticfilesystem:UpdateFileSystem',
      'cloudwatch:GetMetricData',
    ]);
    const onlyRunner = without(runner, instance);
    expect(onlyRunner.map((st) => st.Action)).toEqual([
      'elasticfilesystem:CreateFileSystem',
      'elasticfilesystem:TagResource',
    ]);
    expect(JSON.stringify(onlyRunner[1].Condition)).toContain(
      JSON.stringify([...BATCH_SCRATCH_SUBMIT_TAG_KEYS]),
    );
    for (const policy of [instance, runner]) {
      expect(policy).toContainEqual(
        expect.objectContaining({
          Action: ['kms:DescribeKey', 'kms:CreateGrant', 'kms:GenerateDataKeyWithoutPlaintext'],
          Resource: { 'Fn::GetAtt': [expect.stringMatching(/^ScratchKey/), 'Arn'] },
        }),
      );
    }
  });
});
