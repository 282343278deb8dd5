/**
 * What the fleet's instance role must allow on real AWS (resource ARN formats and condition keys from the
 * Service Authorization Reference), the IMDS hop limit, and the fleet-id wiring between constructs.
 */
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ComputeFleet, FleetNetwork } from '../../lib';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { buildFleet } from './fleet-fixture';
import { agentJsonOf, ensureBundles, fastApp, renderJoin, statements, type Statement } from './support';

beforeAll(ensureBundles);

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const resourcesOf = (s: Statement) =>
  (Array.isArray(s.Resource) ? s.Resource : [s.Resource]).map((r) =>
    renderJoin(r)
      .replaceAll('<Ref:AWS::Partition>', 'aws')
      .replaceAll('<Ref:AWS::AccountId>', '123456789012'),
  );
const allowing = (t: Template, action: string) =>
  statements(t).filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action));

/** IAM's wildcard match of a Resource pattern against an ARN (`*` any run, `?` one character). */
function iamMatches(pattern: string, arn: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(arn);
}

describe('termination hook', () => {
  // The form AWS gives an Auto Scaling group ARN: a group UUID, then the friendly name.
  const realGroupArn =
    'arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:0f8e9a1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b:autoScalingGroupName/Test-FleetGroup-1A2B3C4D';

  test('CompleteLifecycleAction and the heartbeat name a resource that matches a real group ARN, scoped by the fleet tag', () => {
    const t = buildFleet().template();
    for (const action of [
      'autoscaling:CompleteLifecycleAction',
      'autoscaling:RecordLifecycleActionHeartbeat',
    ]) {
      const [s] = allowing(t, action);
      expect(resourcesOf(s).some((r) => iamMatches(r, realGroupArn))).toBe(true);
      expect(s.Condition).toEqual({ StringEquals: { 'autoscaling:ResourceTag/mountfleet:fleet': 'train' } });
    }
  });
});

describe('scratch network interfaces', () => {
  test('CreateNetworkInterface: network-interface/* without a subnet condition, scoped by the subnet and group ARNs', () => {
    const t = buildFleet().template();
    const creates = allowing(t, 'ec2:CreateNetworkInterface');
    expect(creates).toHaveLength(1);
    const [s] = creates;
    expect(s.Condition).toBeUndefined();
    const resources = resourcesOf(s);
    expect(resources).toContain('arn:aws:ec2:us-east-1:123456789012:network-interface/*');
    expect(resources.filter((r) => r.includes(':subnet/'))).toEqual([
      expect.stringMatching(/:subnet\/<Ref:NetworkSubnetuse1az4/),
      expect.stringMatching(/:subnet\/<Ref:NetworkSubnetuse1az6/),
    ]);
    expect(resources).toContainEqual(
      expect.stringMatching(/:security-group\/<GetAtt:ScratchSecurityGroup.*\.GroupId>$/),
    );
    expect(actionsOf(s)).toEqual(['ec2:CreateNetworkInterface']);
  });

  test('DeleteNetworkInterface stays limited to interfaces in the mount-target subnets (ec2:Subnet)', () => {
    const [s] = allowing(buildFleet().template(), 'ec2:DeleteNetworkInterface');
    expect(resourcesOf(s)).toEqual(['arn:aws:ec2:us-east-1:123456789012:network-interface/*']);
    expect(s.Condition).toEqual({ ArnEquals: { 'ec2:Subnet': [expect.anything(), expect.anything()] } });
  });
});

describe('directory bucket mounts', () => {
  test('a read-only mount may only open ReadOnly sessions; the Express cache keeps ReadWrite sessions', () => {
    const t = buildFleet({
      props: (stack) => ({
        mounts: [
          {
            bucket: s3.Bucket.fromBucketName(stack, 'Ro', 'datasets--use1-az4--x-s3'),
            path: '/mnt/ro',
            cache: 'local',
          },
          {
            bucket: s3.Bucket.fromBucketName(stack, 'Rw', 'results--use1-az4--x-s3'),
            prefix: 'out/',
            path: '/mnt/rw',
            access: 'read-write',
            cache: 'local',
          },
        ],
      }),
    }).template();
    const sessions = allowing(t, 's3express:CreateSession');
    const forBucket = (name: string) =>
      sessions.filter((s) => resourcesOf(s).some((r) => r.endsWith(`:bucket/${name}`)));
    const [ro] = forBucket('datasets--use1-az4--x-s3');
    expect(resourcesOf(ro)).toEqual([
      'arn:aws:s3express:us-east-1:123456789012:bucket/datasets--use1-az4--x-s3',
    ]);
    expect(ro.Condition).toEqual({ StringEquals: { 's3express:SessionMode': 'ReadOnly' } });
    const [rw] = forBucket('results--use1-az4--x-s3');
    expect(rw.Condition).toBeUndefined();
    // The cache buckets: Mountpoint writes blocks there, so no ReadOnly condition.
    const cache = sessions.filter((s) => JSON.stringify(s.Resource).includes('Cacheuse1az'));
    expect(cache).toHaveLength(1);
    expect(cache[0].Condition).toBeUndefined();
    // A directory bucket is not authorized by s3:GetObject/ListBucket: none are granted on it.
    expect(JSON.stringify(statements(t))).not.toMatch(/s3:::datasets--|s3:::results--/);
  });
});

describe('expected bucket owner', () => {
  test("every mount carries its bucket's account: the stack's as a deploy-time token, or the one imported", () => {
    const { template } = buildFleet();
    const { mounts } = agentJsonOf(template()) as { mounts: Array<{ expectedBucketOwner?: string }> };
    expect(mounts[0].expectedBucketOwner).toBe('<Ref:AWS::AccountId>');
  });

  test('a bucket imported with its own account, beside one of the stack account', () => {
    const app = fastApp();
    // The stack's account is a token here, so the documentation account can stand for the other one.
    const stack = new Stack(app, 'Pinned', { env: { region: 'us-east-1' } });
    const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4'] });
    const shared = s3.Bucket.fromBucketAttributes(stack, 'Shared', {
      bucketName: 'shared-datasets',
      account: '123456789012',
    });
    const own = s3.Bucket.fromBucketName(stack, 'Own', 'own-datasets');
    new ComputeFleet(stack, 'Fleet', {
      fleetId: 'train',
      network,
      mounts: [
        { bucket: shared, path: '/mnt/shared', cache: 'local' },
        { bucket: own, path: '/mnt/own', cache: 'local' },
      ],
    });
    const { mounts } = agentJsonOf(Template.fromStack(stack)) as {
      mounts: Array<{ expectedBucketOwner?: string }>;
    };
    expect(mounts.map((m) => m.expectedBucketOwner)).toEqual(['123456789012', '<Ref:AWS::AccountId>']);
  });

  test('the schema check at synth still works in an env-agnostic stack (the account is a token there)', () => {
    expect(() =>
      buildFleet({
        envAgnostic: true,
        props: (stack) => ({
          // Nested mount paths: only the agent's schema (not the per-prop checks) sees two mounts at once.
          mounts: [
            { bucket: s3.Bucket.fromBucketName(stack, 'U', 'my-datasets'), path: '/mnt/data' },
            { bucket: s3.Bucket.fromBucketName(stack, 'V', 'my-models'), path: '/mnt/data/models' },
          ],
        }),
      }),
    ).toThrow(
      /Agnostic\/Fleet: agent\.json: invalid agent config from the construct props:\n {2}mounts\.1\.path: conflicts with/,
    );
    const { template } = buildFleet({ envAgnostic: true });
    const { mounts } = agentJsonOf(template()) as { mounts: Array<{ expectedBucketOwner?: string }> };
    expect(mounts[0].expectedBucketOwner).toBe('<Ref:AWS::AccountId>');
  });

  test('bundled app: a mount names its bucket owner when the bucket is in another account', () => {
    const [config] = resolveAppConfig(
      {
        fleet: {
          mounts: [
            { bucket: 'open-data', path: '/mnt/open', bucketOwner: '123456789012' },
            { bucket: 'own-data', path: '/mnt/own' },
          ],
        },
      },
      'test',
    );
    const stack = new MountfleetStack(fastApp(), 'Mountfleet', { config });
    const { mounts } = agentJsonOf(Template.fromStack(stack)) as {
      mounts: Array<{ expectedBucketOwner?: string }>;
    };
    // No account in the config: the stack deploys to the caller's account (a token at synth).
    expect(mounts.map((m) => m.expectedBucketOwner)).toEqual(['123456789012', '<Ref:AWS::AccountId>']);
    expect(() =>
      resolveAppConfig(
        { fleet: { mounts: [{ bucket: 'x-data', path: '/mnt/x', bucketOwner: '42' }] } },
        'test',
      ),
    ).toThrow(/fleet\.mounts\.0\.bucketOwner: must be the 12-digit account id of the bucket owner/);
  });

  test('a bucket account that is no account id fails at synth, naming the field', () => {
    const app = fastApp();
    const stack = new Stack(app, 'Bad', { env: { region: 'us-east-1' } });
    const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4'] });
    const bucket = s3.Bucket.fromBucketAttributes(stack, 'B', { bucketName: 'data', account: 'not-an-id' });
    expect(
      () =>
        new ComputeFleet(stack, 'Fleet', {
          fleetId: 'train',
          network,
          mounts: [{ bucket, path: '/mnt/d', cache: 'local' }],
        }),
    ).toThrow(
      /Bad\/Fleet: .*mounts\.0\.expectedBucketOwner: must be the 12-digit account id of the bucket owner/s,
    );
  });
});

describe('IMDS', () => {
  test('hop limit 1 by default (IMDS credentials stay on the host), IMDSv2 required', () => {
    buildFleet()
      .template()
      .hasResourceProperties('AWS::EC2::LaunchTemplate', {
        LaunchTemplateData: {
          MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1, HttpEndpoint: 'enabled' },
        },
      });
  });

  test('hop limit 2 only when containers on the instance need IMDS', () => {
    buildFleet({ props: { containersNeedImds: true } })
      .template()
      .hasResourceProperties('AWS::EC2::LaunchTemplate', {
        LaunchTemplateData: {
          MetadataOptions: Match.objectLike({ HttpTokens: 'required', HttpPutResponseHopLimit: 2 }),
        },
      });
  });
});

describe('Session Manager', () => {
  const ssmCore = Match.arrayWith([
    {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/AmazonSSMManagedInstanceCore']],
    },
  ]);

  test('the role can register with Systems Manager by default, so operators need no SSH', () => {
    buildFleet().template().hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: ssmCore });
  });

  test('sessionManager: false leaves the policy out', () => {
    const roles = buildFleet({ props: { sessionManager: false } })
      .template()
      .findResources('AWS::IAM::Role', { Properties: { ManagedPolicyArns: ssmCore } });
    expect(Object.keys(roles)).toEqual([]);
  });
});

describe('fleet id wiring', () => {
  test('scratch file systems of another fleet fail at synth, naming both ids and both construct paths', () => {
    expect(() => buildFleet({ scratchFleetId: 'render' })).toThrow(
      'Test/Fleet: scratch: Test/Scratch is for fleet "render", this fleet is "train" — give both the same fleetId',
    );
  });
});
