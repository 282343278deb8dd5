/**
 * MountpointCsiVolumes: the driver add-on with its Pod Identity association, the role's trust and grants,
 * and the PV/PVC manifest (validated offline against the Kubernetes schemas), on an imported aws-eks-v2
 * cluster with an imported kubectl provider (what `addManifest` needs on an imported cluster).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ExpressCache, MountpointCsiVolumes, type MountpointCsiVolumesProps } from '../../lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { KUBERNETES_VERSIONS, kubernetesValidate } from '../support/kubernetes-validate';
import { REPO_ROOT } from '../support/moto';
import { fastApp } from './support';

const ACCOUNT = '123456789012';

/** A stack with an imported cluster whose manifests go through an existing kubectl provider. */
export function clusterStack() {
  const stack = new Stack(fastApp(), 'Eks', { env: { account: ACCOUNT, region: 'us-east-1' } });
  const kubectlProvider = eks.KubectlProvider.fromKubectlProviderAttributes(stack, 'Kubectl', {
    serviceToken: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:kubectl-provider`,
  });
  const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', {
    clusterName: 'training',
    kubectlProvider,
  });
  const datasets = s3.Bucket.fromBucketName(stack, 'Datasets', 'my-datasets');
  const outputs = s3.Bucket.fromBucketName(stack, 'Outputs', 'my-outputs');
  const expressCache = ExpressCache.fromBucketNames(stack, 'Cache', {
    bucketNames: { 'use1-az4': 'ml-cache--use1-az4--x-s3', 'use1-az6': 'ml-cache--use1-az6--x-s3' },
  });
  const props = (extra: Partial<MountpointCsiVolumesProps> = {}): MountpointCsiVolumesProps => ({
    cluster,
    instanceType: 'p5.48xlarge',
    namespace: 'training',
    expressCache,
    volumes: [
      { name: 'imagenet', bucket: datasets, prefix: 'imagenet/', dataset: 'immutable' },
      { name: 'checkpoints', bucket: outputs, prefix: 'ckpt/', access: 'read-write', cache: 'local' },
    ],
    ...extra,
  });
  return { stack, cluster, props };
}

function manifestOf(template: Template): Array<Record<string, unknown>> {
  const [resource] = Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesResource'));
  const manifest = (resource as { Properties: { Manifest: unknown } }).Properties.Manifest;
  expect(typeof manifest).toBe('string'); // all literal here: no token left for kubectl to choke on
  return JSON.parse(manifest as string) as Array<Record<string, unknown>>;
}

describe('MountpointCsiVolumes', () => {
  const { stack, props } = clusterStack();
  const volumes = new MountpointCsiVolumes(stack, 'Volumes', props());
  const template = Template.fromStack(stack);

  test('installs the driver add-on with a Pod Identity association on its service account', () => {
    template.hasResourceProperties('AWS::EKS::Addon', {
      AddonName: 'aws-mountpoint-s3-csi-driver',
      ClusterName: 'training',
      PodIdentityAssociations: [
        {
          ServiceAccount: 's3-csi-driver-sa',
          RoleArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('DriverRole'), 'Arn'] },
        },
      ],
    });
    // The association needs the Pod Identity agent; the add-on waits for it.
    template.hasResourceProperties('AWS::EKS::Addon', {
      AddonName: 'eks-pod-identity-agent',
      ClusterName: 'training',
    });
    const addons = template.findResources('AWS::EKS::Addon', {
      Properties: { AddonName: 'aws-mountpoint-s3-csi-driver' },
    });
    expect(Object.values(addons)[0].DependsOn).toEqual([expect.stringMatching(/PodIdentityAgent/)]);
  });

  test('the role trusts EKS Pod Identity for kube-system/s3-csi-driver-sa of this cluster only', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'pods.eks.amazonaws.com' },
            Action: ['sts:AssumeRole', 'sts:TagSession'],
            Condition: {
              StringEquals: {
                'aws:RequestTag/eks-cluster-name': 'training',
                'aws:RequestTag/kubernetes-namespace': 'kube-system',
                'aws:RequestTag/kubernetes-service-account': 's3-csi-driver-sa',
              },
            },
          },
        ],
      },
    });
  });

  test('grants are scoped to the prefixes; write and delete only on the read-write volume; cache sessions', () => {
    const [policy] = Object.values(template.findResources('AWS::IAM::Policy'));
    const statements = (policy as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties
      .PolicyDocument.Statement;
    const arn = (s: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, s]] });
    expect(statements).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: 's3:ListBucket',
          Resource: arn(':s3:::my-datasets'),
          Condition: { StringLike: { 's3:prefix': ['imagenet/', 'imagenet/*'] } },
        },
        { Effect: 'Allow', Action: 's3:GetObject', Resource: arn(':s3:::my-datasets/imagenet/*') },
        {
          Effect: 'Allow',
          Action: 's3:ListBucket',
          Resource: arn(':s3:::my-outputs'),
          Condition: { StringLike: { 's3:prefix': ['ckpt/', 'ckpt/*'] } },
        },
        {
          Effect: 'Allow',
          Action: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:DeleteObject'],
          Resource: arn(':s3:::my-outputs/ckpt/*'),
        },
        {
          Effect: 'Allow',
          Action: 's3express:CreateSession',
          Resource: [
            arn(`:s3express:us-east-1:${ACCOUNT}:bucket/ml-cache--use1-az4--x-s3`),
            arn(`:s3express:us-east-1:${ACCOUNT}:bucket/ml-cache--use1-az6--x-s3`),
          ],
        },
      ]),
    );
    expect(statements).toHaveLength(5);
  });

  test('renders a PV/PVC per zone for the Express-cached volume and one pair for the other', () => {
    const docs = manifestOf(template) as Array<{
      kind: string;
      metadata: { name: string };
      spec: Record<string, unknown>;
    }>;
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'PersistentVolume/imagenet-use1-az4',
      'PersistentVolumeClaim/imagenet-use1-az4',
      'PersistentVolume/imagenet-use1-az6',
      'PersistentVolumeClaim/imagenet-use1-az6',
      'PersistentVolume/checkpoints',
      'PersistentVolumeClaim/checkpoints',
    ]);
    expect(docs[2].spec.mountOptions).toContain('cache-xz ml-cache--use1-az6--x-s3');
    expect(docs[4].spec.mountOptions).not.toContainEqual(expect.stringMatching(/^cache-xz/));
    const yaml = docs.map((d) => `---\n${JSON.stringify(d)}\n`).join('');
    for (const version of KUBERNETES_VERSIONS) expect(kubernetesValidate(yaml, version)).toBe('');
  });

  test('the manifest is applied after the driver add-on', () => {
    const [manifest] = Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesResource'));
    expect(manifest.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/VolumesAddon/)]));
  });

  test('claimNameFor: the zone claim, or the only claim of a volume without a per-zone cache', () => {
    expect(volumes.claimNameFor('imagenet', 'use1-az6')).toBe('imagenet-use1-az6');
    expect(volumes.claimNameFor('checkpoints', 'use1-az6')).toBe('checkpoints');
    expect(volumes.claimNamesByZone('imagenet')).toEqual({
      'use1-az4': 'imagenet-use1-az4',
      'use1-az6': 'imagenet-use1-az6',
    });
    expect(() => volumes.fallbackClaimNameFor('imagenet')).toThrow(
      'Eks/Volumes: fallbackClaimNameFor(imagenet): no fallback claim — set fallbackClaims: true',
    );
    expect(() => volumes.claimNameFor('imagenet', 'use1-az1')).toThrow(
      'Eks/Volumes: claimNameFor(imagenet, use1-az1): no claim in use1-az1 — the Express cache has use1-az4, use1-az6',
    );
  });
});

describe('MountpointCsiVolumes validation at synth: construct path, field, fix', () => {
  test.each<[string, Partial<MountpointCsiVolumesProps>, string]>([
    [
      'unknown instance type',
      { instanceType: 'p5.49xlarge' },
      'Eks/Volumes: instanceType: unknown instance type "p5.49xlarge"',
    ],
    ['bad namespace', { namespace: 'ML' }, 'Eks/Volumes: namespace: "ML" is not a DNS-1123 label'],
    [
      'bad quantity',
      { cacheSizeLimit: '100GB' },
      'Eks/Volumes: cacheSizeLimit: "100GB" is not a Kubernetes quantity',
    ],
    [
      'add-on v1',
      { addonVersion: 'v1.15.0-eksbuild.1' },
      'Eks/Volumes: addonVersion: v1.15.0-eksbuild.1 is not a v2 driver',
    ],
    [
      'add-on before v2.9.0 without mountpointVersion',
      { addonVersion: 'v2.8.0-eksbuild.1' },
      'Eks/Volumes: addonVersion: v2.8.0-eksbuild.1 runs a Mountpoint older than 1.24.0, which has no --memory-target — set mountpointVersion',
    ],
    [
      'add-on version typo',
      { addonVersion: '2.9.2' },
      'Eks/Volumes: addonVersion: "2.9.2" is not an add-on version',
    ],
    [
      'bad Mountpoint version',
      { mountpointVersion: 'v1.24' },
      'Eks/Volumes: mountpointVersion: "v1.24" is not a Mountpoint release',
    ],
  ])('%s', (_name, extra, message) => {
    const { stack, props } = clusterStack();
    expect(() => new MountpointCsiVolumes(stack, 'Volumes', props(extra))).toThrow(message);
  });

  test('driver-refused volume attributes and options name the volume field', () => {
    const { stack, props } = clusterStack();
    const bucket = s3.Bucket.fromBucketName(stack, 'B', 'bucket-one');
    expect(
      () =>
        new MountpointCsiVolumes(
          stack,
          'Volumes',
          props({ volumes: [{ name: 'a', bucket, volumeAttributes: { cache: 'disk' } }] }),
        ),
    ).toThrow(
      'Eks/Volumes: volumes[0].volumeAttributes.cache: "disk" is not accepted by the driver — use "emptyDir" or "ephemeral"',
    );
    expect(
      () =>
        new MountpointCsiVolumes(
          stack,
          'V2',
          props({ volumes: [{ name: 'a', bucket, mountOptions: ['ca-bundle x'] }] }),
        ),
    ).toThrow('Eks/V2: volumes[0].mountOptions[0]: "ca-bundle x" is not accepted');
    expect(
      () =>
        new MountpointCsiVolumes(stack, 'V3', props({ volumes: [{ name: 'a', bucket, prefix: 'data/*' }] })),
    ).toThrow('Eks/V3: volumes[0].prefix: must not contain "*" or "?"');
    expect(
      () =>
        new MountpointCsiVolumes(
          stack,
          'V4',
          props({
            volumes: [
              { name: 'a', bucket },
              { name: 'a', bucket },
            ],
            expressCache: undefined,
          }),
        ),
    ).toThrow('Eks/V4: volumes[].name: "a" is rendered twice');
  });
});

test('fallbackClaims: a cache-less claim per Express-cached volume, named by fallbackClaimNameFor', () => {
  const { stack, props } = clusterStack();
  const volumes = new MountpointCsiVolumes(stack, 'Volumes', props({ fallbackClaims: true }));
  expect(volumes.fallbackClaimNameFor('imagenet')).toBe('imagenet-direct');
  expect(volumes.claimNameFor('imagenet', 'use1-az4')).toBe('imagenet-use1-az4');
  const names = manifestOf(Template.fromStack(stack)).map((d) => (d.metadata as { name: string }).name);
  expect(names).toContain('imagenet-direct');
  expect(names).not.toContain('checkpoints-direct');
});

test('no cache session grant when no volume uses the Express cache; no DeleteObject on immutable data', () => {
  const { stack, props } = clusterStack();
  const bucket = s3.Bucket.fromBucketName(stack, 'B', 'bucket-one');
  new MountpointCsiVolumes(
    stack,
    'Volumes',
    props({
      volumes: [
        { name: 'a', bucket, prefix: 'a/', access: 'read-write', dataset: 'immutable', cache: 'local' },
      ],
    }),
  );
  const policy = JSON.stringify(Template.fromStack(stack).findResources('AWS::IAM::Policy'));
  expect(policy).not.toContain('s3express:CreateSession');
  expect(policy).toContain('s3:PutObject');
  expect(policy).not.toContain('s3:DeleteObject');
});

test('an older v2 add-on with its Mountpoint release: pinned, and no --memory-target in the options', () => {
  const { stack, props } = clusterStack();
  new MountpointCsiVolumes(
    stack,
    'Volumes',
    props({ addonVersion: 'v2.8.0-eksbuild.1', mountpointVersion: '1.23.0' }),
  );
  const template = Template.fromStack(stack);
  template.hasResourceProperties('AWS::EKS::Addon', { AddonVersion: 'v2.8.0-eksbuild.1' });
  const options = manifestOf(template).flatMap(
    (d) => (d.spec as { mountOptions?: string[] }).mountOptions ?? [],
  );
  expect(options).toContain('maximum-throughput-gbps 50');
  expect(options.filter((o) => o.startsWith('memory-target'))).toEqual([]);
});

test('installPodIdentityAgent false: only the driver add-on (the cluster already runs the agent)', () => {
  const { stack, props } = clusterStack();
  new MountpointCsiVolumes(stack, 'Volumes', props({ installPodIdentityAgent: false }));
  const template = Template.fromStack(stack);
  template.resourceCountIs('AWS::EKS::Addon', 1);
  template.hasResourceProperties('AWS::EKS::Addon', { AddonName: 'aws-mountpoint-s3-csi-driver' });
});

test("an aws-eks-v2 Cluster's own Pod Identity agent add-on is used, not a second one", () => {
  const stack = new Stack(fastApp(), 'Owned', { env: { account: ACCOUNT, region: 'us-east-1' } });
  const cluster = new eks.Cluster(stack, 'Cluster', {
    version: eks.KubernetesVersion.V1_33,
    kubectlProviderOptions: {
      kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(
        stack,
        'KubectlLayer',
        `arn:aws:lambda:us-east-1:${ACCOUNT}:layer:kubectl:1`,
      ),
    },
  });
  new MountpointCsiVolumes(stack, 'Volumes', {
    cluster,
    instanceType: 'm5.large',
    volumes: [{ name: 'data', bucket: s3.Bucket.fromBucketName(stack, 'B', 'bucket-one') }],
  });
  const template = Template.fromStack(stack);
  const agents = template.findResources('AWS::EKS::Addon', {
    Properties: { AddonName: 'eks-pod-identity-agent' },
  });
  expect(Object.keys(agents)).toEqual([expect.stringMatching(/^ClusterEksPodIdentityAgentAddon/)]);
});

describe('a stack with MountpointCsiVolumes', () => {
  test('cdk-nag AwsSolutions: no unacknowledged finding', () => {
    const { stack, props } = clusterStack();
    new MountpointCsiVolumes(stack, 'Volumes', props());
    const pack = new AwsSolutionsChecks(stack.node.root as App);
    const { violations } = pack.validateScope(stack);
    expect(
      violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(',')}`),
    ).toEqual([]);
  });

  test('cfn-lint: no error and no warning', () => {
    const { stack, props } = clusterStack();
    new MountpointCsiVolumes(stack, 'Volumes', props());
    const out = mkdtempSync(join(tmpdir(), 'mf-eks-'));
    const template = join(out, 'Eks.template.json');
    writeFileSync(template, JSON.stringify(Template.fromStack(stack).toJSON()));
    let output = '';
    try {
      execFileSync(join(REPO_ROOT, '.venv', 'bin', 'cfn-lint'), ['--format', 'parseable', template], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; status?: number };
      output = `exit ${err.status}\n${err.stdout ?? ''}${err.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60000);
});
