/**
 * The Batch host's instance role, evaluated as IAM would (batch-iam-evaluator.ts): it keeps what the host needs
 * (the mounts, the agent bundle, metrics) and has no scratch create, tag, mount-target or delete calls, since the
 * submit function makes a job's file system. Each refused request is allowed for ComputeFleet's role, whose agent
 * does make scratch, so a refusal here is the grant's absence, not a malformed request. The fleet still reaches
 * the scratch mount targets over NFS: ECS mounts a job's EFS volume from the host.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { TAG_FLEET, TAG_TEARDOWN_STARTED_AT } from '../../core/contract';
import { batchFleetStack } from './batch-fleet-fixture';
import { ensureBundles } from './support';
import { evaluate, policyOfRole, type IamRequest } from './batch-iam-evaluator';
import { buildFleet } from './fleet-fixture';

beforeAll(ensureBundles);

const FS = 'arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0123456789abcdef0';
const fleetTagged = { [`aws:ResourceTag/${TAG_FLEET}`]: 'train' };

const scratchCalls: Array<[string, IamRequest]> = [
  [
    'CreateFileSystem with the fleet tag, encrypted',
    {
      action: 'elasticfilesystem:CreateFileSystem',
      resource: '*',
      context: {
        [`aws:RequestTag/${TAG_FLEET}`]: 'train',
        'aws:TagKeys': [TAG_FLEET],
        'elasticfilesystem:Encrypted': 'true',
      },
    },
  ],
  [
    'TagResource (the teardown mark) on a fleet file system',
    {
      action: 'elasticfilesystem:TagResource',
      resource: FS,
      context: { ...fleetTagged, 'aws:TagKeys': [TAG_TEARDOWN_STARTED_AT] },
    },
  ],
  [
    'DeleteFileSystem of a fleet file system',
    { action: 'elasticfilesystem:DeleteFileSystem', resource: FS, context: fleetTagged },
  ],
  [
    'CreateMountTarget on a fleet file system',
    { action: 'elasticfilesystem:CreateMountTarget', resource: FS, context: fleetTagged },
  ],
  [
    'UpdateFileSystem (the credit guard) of a fleet file system',
    { action: 'elasticfilesystem:UpdateFileSystem', resource: FS, context: fleetTagged },
  ],
];

describe('the Batch host role', () => {
  const { template } = batchFleetStack();
  const t = template();
  const hostRole = policyOfRole(t, 'FleetRole');
  const computeFleetRole = policyOfRole(buildFleet().template(), 'FleetRole');

  test.each(scratchCalls)('%s: refused (ComputeFleet’s role: allowed)', (_name, request) => {
    expect(evaluate(hostRole, request)).toBe('implicit-deny');
    expect(evaluate(computeFleetRole, request)).toBe('allowed');
  });

  test('keeps what the host needs: its mounts’ prefixes, and no other', () => {
    expect(
      evaluate(hostRole, {
        action: 's3:GetObject',
        resource: 'arn:aws:s3:::my-datasets/imagenet/n01440764/0001.JPEG',
      }),
    ).toBe('allowed');
    expect(
      evaluate(hostRole, {
        action: 's3:PutObject',
        resource: 'arn:aws:s3:::my-datasets/outputs/run-1/model.pt',
      }),
    ).toBe('allowed');
    expect(evaluate(hostRole, { action: 's3:GetObject', resource: 'arn:aws:s3:::my-datasets/other/x' })).toBe(
      'implicit-deny',
    );
  });

  test('the fleet still reaches the scratch mount targets on NFS (ECS mounts a job’s volume from the host)', () => {
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp',
      FromPort: 2049,
      ToPort: 2049,
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ScratchSecurityGroup'), 'GroupId'] },
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetSecurityGroup'), 'GroupId'] },
    });
  });
});
