import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { parseAgentConfig } from '../../../core/contract/agent-config';
import { planCacheVolume } from '../../../core/tuner/cache-volume';
import { lookupInstanceType } from '../../../core/instance/instance-type-lookup';
import { planMounts } from '../../../core/tuner/plan-mounts';
import { grantBucketMount } from '../../../lib/private/mount-grants';

type Access = 'read-only' | 'read-write';
type Dataset = 'immutable' | 'mutable';

/** The object actions a role gets for one mount of `outputs/`. */
function objectActions(access: Access, dataset: Dataset): string[] {
  const stack = new Stack(new App(), 'S', { env: { account: '123456789012', region: 'us-east-1' } });
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
  const bucket = s3.Bucket.fromBucketName(stack, 'B', 'my-datasets');
  grantBucketMount(stack, role, { bucket, prefix: 'outputs/', access, dataset, description: '/mnt/out' });
  const [policy] = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')) as {
    Properties: { PolicyDocument: { Statement: { Action: string | string[] }[] } };
  }[];
  const actions = policy.Properties.PolicyDocument.Statement.flatMap((s) => s.Action);
  return actions.filter((a) => a !== 's3:ListBucket');
}

/** The flags the agent gives Mountpoint for the same mount. */
async function mountpointArgs(access: Access, dataset: Dataset): Promise<string[]> {
  const config = parseAgentConfig(
    {
      version: 1,
      fleetId: 'f',
      region: 'us-east-1',
      mounts: [
        { bucket: 'my-datasets', prefix: 'outputs/', path: '/mnt/out', access, dataset, cache: 'none' },
      ],
    },
    '(test)',
  );
  const instance = await lookupInstanceType('m6i.large', undefined, () => undefined);
  const plan = planMounts({
    config,
    instance,
    memory: { totalMiB: instance.memoryMiB, source: 'test' },
    cacheVolume: planCacheVolume([], 0),
  });
  return plan.mounts[0].processes[0].args;
}

// One rule decides both: the role may delete exactly where Mountpoint is told it may (--allow-delete).
test.each<[Access, Dataset, string[]]>([
  ['read-only', 'mutable', ['s3:GetObject']],
  ['read-only', 'immutable', ['s3:GetObject']],
  ['read-write', 'immutable', ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload']],
  ['read-write', 'mutable', ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:DeleteObject']],
])(
  '%s %s mount: object actions %j, DeleteObject only with --allow-delete',
  async (access, dataset, actions) => {
    expect(objectActions(access, dataset)).toEqual(actions);
    const args = await mountpointArgs(access, dataset);
    expect(args.includes('--allow-delete')).toBe(actions.includes('s3:DeleteObject'));
    expect(args.includes('--allow-overwrite')).toBe(actions.includes('s3:DeleteObject'));
  },
);
