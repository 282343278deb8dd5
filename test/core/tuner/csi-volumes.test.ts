/**
 * CSI driver v2 PV/PVC rendering: golden tuned options per instance type, the driver's own rules on
 * volume attributes and mount options, and every rendered manifest validated offline against the
 * Kubernetes schemas (kubernetes-validate).
 */
import {
  csiInputProblems,
  planCsiClaims,
  renderCsiManifests,
  toYamlStream,
  ZONE_ID_LABEL,
  type CsiPlanInput,
} from '../../../core/tuner/csi-volumes';
import { isKubernetesQuantity } from '../../../core/tuner/csi-validation';
import { FALLBACK_INSTANCE_TYPES } from '../../../core/tuner/instance-facts';
import { KUBERNETES_VERSIONS, kubernetesValidate } from '../../support/kubernetes-validate';
import { parseArgs } from '../../support/mount-s3-standin/cli-spec';

const EXPRESS = { 'use1-az4': 'cache--use1-az4--x-s3', 'use1-az6': 'cache--use1-az6--x-s3' };

function input(instanceType: string, extra: Partial<CsiPlanInput> = {}): CsiPlanInput {
  return {
    instance: FALLBACK_INSTANCE_TYPES.get(instanceType)!,
    region: 'us-east-1',
    namespace: 'training',
    volumes: [
      { name: 'imagenet', bucket: 'my-datasets', prefix: 'imagenet/', dataset: 'immutable' },
      { name: 'out', bucket: 'my-outputs', prefix: 'out/', access: 'read-write', cache: 'none' },
    ],
    expressBuckets: EXPRESS,
    ...extra,
  };
}

describe('tuned mount options per instance type (golden)', () => {
  // Two volumes on each node: the host's bandwidth and Mountpoint's memory share are split between them.
  test.each<[string, string[], string]>([
    [
      't3.medium', // burstable: the 0.256 Gbps baseline rounds up to the 1 Gbps minimum; 512 MiB floor; 8 MiB parts
      [
        'allow-other',
        'maximum-throughput-gbps 1',
        'memory-target 512',
        'metadata-ttl indefinite',
        'read-part-size 8388608',
      ],
      '5120Mi', // no instance store: 25% of 20 GiB root, one locally cached volume
    ],
    [
      'm6id.4xlarge', // 12.5 Gbps peak → 12 → 6 per volume: 15 connections x 2 x 32 MiB parts, + 1/8; one 950 GB NVMe disk, 90% usable
      [
        'allow-other',
        'maximum-throughput-gbps 6',
        'memory-target 1098',
        'metadata-ttl indefinite',
        'read-part-size 33554432',
      ],
      '815391Mi',
    ],
    [
      'c6gn.16xlarge', // 100 Gbps → 50 per volume: 125 connections x 2 x 32 MiB parts, + overhead (8/7)
      [
        'allow-other',
        'maximum-throughput-gbps 50',
        'memory-target 9143',
        'metadata-ttl indefinite',
        'read-part-size 33554432',
      ],
      '5120Mi',
    ],
  ])('%s', (type, tuned, sizeLimit) => {
    const claims = planCsiClaims(input(type));
    expect(claims.map((c) => c.persistentVolumeName)).toEqual([
      'imagenet-use1-az4',
      'imagenet-use1-az6',
      'out',
    ]);
    const [az4, az6, out] = claims;
    const common = ['prefix imagenet/', 'region us-east-1'];
    expect(az4.mountOptions).toEqual([...tuned, 'cache-xz cache--use1-az4--x-s3', ...common].sort());
    expect(az6.mountOptions).toEqual([...tuned, 'cache-xz cache--use1-az6--x-s3', ...common].sort());
    expect(az4.volumeAttributes).toEqual({
      bucketName: 'my-datasets',
      cache: 'emptyDir',
      cacheEmptyDirSizeLimit: sizeLimit,
    });
    // Read-write, mutable, cache none: minimal TTL, overwrite and delete, no cache volume, no --read-only.
    expect(out.mountOptions).toEqual(
      [
        'allow-delete',
        'allow-other',
        'allow-overwrite',
        tuned[1],
        tuned[2],
        tuned[4],
        'metadata-ttl minimal',
        'prefix out/',
        'region us-east-1',
      ].sort(),
    );
    expect(out.volumeAttributes).toEqual({ bucketName: 'my-outputs' });
    expect(out.readOnly).toBe(false);
  });

  test('every option is one Mountpoint 1.24.0 accepts once the driver adds "--"', () => {
    for (const type of ['t3.medium', 'p5.48xlarge', 'm7i.4xlarge']) {
      for (const c of planCsiClaims(input(type))) {
        const argv = c.mountOptions.flatMap((o) => {
          const [key, ...value] = o.split(' ');
          return [`--${key}`, ...value];
        });
        expect(() => parseArgs([...argv, 'bucket', '/mnt/x'])).not.toThrow();
      }
    }
  });

  test('the same input renders the same option set (MP Pod sharing needs identical options)', () => {
    expect(planCsiClaims(input('p5.48xlarge'))).toEqual(planCsiClaims(input('p5.48xlarge')));
  });

  test('a Mountpoint older than 1.24.0 (driver < v2.9.0) gets no memory-target', () => {
    const [claim] = planCsiClaims(input('c6gn.16xlarge', { mountpointVersion: '1.23.0' }));
    expect(claim.mountOptions.some((o) => o.startsWith('memory-target'))).toBe(false);
    expect(claim.mountOptions).toContain('maximum-throughput-gbps 50');
  });

  test("the user's option replaces the tuned one with the same key", () => {
    const volumes = [{ name: 'data', bucket: 'b1', mountOptions: ['metadata-ttl=300', 'uid 1000'] }];
    const [claim] = planCsiClaims(input('m5.large', { volumes, expressBuckets: {} }));
    expect(claim.mountOptions.filter((o) => o.startsWith('metadata-ttl'))).toEqual(['metadata-ttl=300']);
    expect(claim.mountOptions).toContain('uid 1000');
  });

  test('cacheSizeLimit overrides the derived emptyDir limit; no Express cache: one claim, no zone pin', () => {
    const [claim] = planCsiClaims(
      input('m5.large', {
        volumes: [{ name: 'data', bucket: 'b1' }],
        expressBuckets: {},
        cacheSizeLimit: '50Gi',
      }),
    );
    expect(claim).toMatchObject({ claimName: 'data', volumeAttributes: { cacheEmptyDirSizeLimit: '50Gi' } });
    expect(claim.azId).toBeUndefined();
  });
});

test('fallbackClaims: one cache-less <name>-direct claim per Express-cached volume, for every zone', () => {
  const claims = planCsiClaims(input('m5.large', { fallbackClaims: true }));
  expect(claims.map((c) => c.claimName)).toEqual([
    'imagenet-use1-az4',
    'imagenet-use1-az6',
    'imagenet-direct',
    'out',
  ]);
  const direct = claims[2];
  expect(direct).toMatchObject({ fallback: true, volumeAttributes: claims[0].volumeAttributes });
  expect(direct.azId).toBeUndefined();
  // Same tuned options as the zone claims, less the zone's cache bucket.
  expect(direct.mountOptions).toEqual(claims[0].mountOptions.filter((o) => !o.startsWith('cache-xz')));
  const [, , , , pv] = renderCsiManifests(claims, 'training') as Array<{ spec: Record<string, unknown> }>;
  expect(pv.spec.nodeAffinity).toBeUndefined();
});

describe('rendered manifests', () => {
  test('per-zone PVs are pinned to their zone ID and their claims bound to them', () => {
    const docs = renderCsiManifests(planCsiClaims(input('m5.large')), 'training') as Array<{
      kind: string;
      metadata: { name: string; namespace?: string };
      spec: Record<string, unknown>;
    }>;
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'PersistentVolume/imagenet-use1-az4',
      'PersistentVolumeClaim/imagenet-use1-az4',
      'PersistentVolume/imagenet-use1-az6',
      'PersistentVolumeClaim/imagenet-use1-az6',
      'PersistentVolume/out',
      'PersistentVolumeClaim/out',
    ]);
    const [pv, pvc] = docs;
    expect(pv.spec.nodeAffinity).toEqual({
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: ZONE_ID_LABEL, operator: 'In', values: ['use1-az4'] }] },
        ],
      },
    });
    expect(pv.spec).toMatchObject({
      accessModes: ['ReadOnlyMany'],
      storageClassName: '',
      claimRef: { namespace: 'training', name: 'imagenet-use1-az4' },
      csi: { driver: 's3.csi.aws.com', volumeHandle: 'imagenet-use1-az4' },
    });
    expect(pvc).toMatchObject({
      metadata: { namespace: 'training' },
      spec: { volumeName: 'imagenet-use1-az4', storageClassName: '', accessModes: ['ReadOnlyMany'] },
    });
    expect(docs[4].spec.nodeAffinity).toBeUndefined();
  });

  const scenarios: Array<[string, CsiPlanInput]> = [
    ['Express per zone + fallback + cache-less read-write', input('p5.48xlarge', { fallbackClaims: true })],
    [
      'ephemeral cache, proxy, container limits, pod credentials',
      input('m7i.4xlarge', {
        expressBuckets: {},
        volumes: [
          {
            name: 'shards',
            bucket: 'my-shards',
            volumeAttributes: {
              cache: 'ephemeral',
              cacheEphemeralStorageClassName: 'gp3',
              cacheEphemeralStorageResourceRequest: '100Gi',
              authenticationSource: 'pod',
              mountpointContainerResourcesLimitsMemory: '4Gi',
              'mountpointEnv.HTTPS_PROXY': 'http://proxy:3128',
            },
            mountOptions: ['uid 1000', 'gid 2000'],
          },
        ],
      }),
    ],
  ];
  test.each(scenarios)('%s: valid against the Kubernetes schemas (offline, strict)', (_name, i) => {
    expect(csiInputProblems(i)).toEqual([]);
    const yaml = toYamlStream(renderCsiManifests(planCsiClaims(i), i.namespace));
    for (const version of KUBERNETES_VERSIONS) expect(kubernetesValidate(yaml, version)).toBe('');
  });

  test('the validator catches a broken manifest (the check above can fail)', () => {
    const [pv] = renderCsiManifests(planCsiClaims(input('m5.large')), 'training');
    const broken = { ...pv, spec: { ...(pv.spec as object), capacity: { storage: { gi: 1 } } } };
    expect(kubernetesValidate(toYamlStream([broken]), '1.37.0')).toMatch(/spec\.capacity\.storage/);
  });
});

describe('what the driver refuses is refused before rendering', () => {
  const problemsOf = (volume: Record<string, unknown>, extra: Partial<CsiPlanInput> = {}) =>
    csiInputProblems(
      input('m5.large', {
        volumes: [{ name: 'data', bucket: 'b1', ...volume }],
        expressBuckets: {},
        ...extra,
      }),
    ).map((p) => `${p.field}: ${p.problem} — ${p.fix}`);

  test.each<[string, Record<string, unknown>, RegExp]>([
    [
      'unknown attribute',
      { volumeAttributes: { cacheSize: '1Gi' } },
      /volumeAttributes\.cacheSize: is not a key the CSI driver reads/,
    ],
    ['bucketName attribute', { volumeAttributes: { bucketName: 'x' } }, /bucketName: is set from the bucket/],
    [
      'cache enum',
      { volumeAttributes: { cache: 'hostPath' } },
      /cache: "hostPath" is not accepted.*"emptyDir" or "ephemeral"/,
    ],
    ['medium enum', { volumeAttributes: { cache: 'emptyDir', cacheEmptyDirMedium: 'memory' } }, /"Memory"/],
    [
      'ephemeral needs both keys',
      { volumeAttributes: { cache: 'ephemeral', cacheEphemeralStorageClassName: 'gp3' } },
      /cacheEphemeralStorageResourceRequest: is required with cache "ephemeral"/,
    ],
    [
      'ephemeral key without ephemeral',
      { volumeAttributes: { cacheEphemeralStorageClassName: 'gp3' } },
      /applies only with cache "ephemeral"/,
    ],
    [
      'bad quantity',
      { volumeAttributes: { mountpointContainerResourcesLimitsMemory: '4 GB' } },
      /"4 GB" is not a Kubernetes quantity/,
    ],
    ['non-string attribute', { volumeAttributes: { authenticationSource: 1 } }, /must be a string/],
    [
      'ca-bundle',
      { mountOptions: ['ca-bundle /etc/ca.pem'] },
      /mountOptions\[0\]: "ca-bundle \/etc\/ca.pem" is not accepted/,
    ],
    ['-o', { mountOptions: ['-o allow_other'] }, /mountOptions\[0\].*not accepted.*-o/],
    ['dashes', { mountOptions: ['--uid 1000'] }, /starts with "-".*"uid 1000"/],
    ['cache option', { mountOptions: ['cache /tmp/x'] }, /volumeAttributes\.cache/],
    ['read-write without prefix', { access: 'read-write' }, /prefix: a read-write volume needs a prefix/],
    ['prefix without its slash', { prefix: 'datasets' }, /prefix: must be empty or end in "\/"/],
    ['bad name', { name: 'Data_1' }, /name: "Data_1" is not a DNS-1123 subdomain/],
    [
      'express without buckets',
      { cache: 'express' },
      /cache: cache "express" needs an Express cache bucket per zone/,
    ],
  ])('%s', (_name, volume, message) => {
    expect(problemsOf(volume).join('\n')).toMatch(message);
  });

  test('bad namespace and cacheSizeLimit', () => {
    expect(problemsOf({}, { namespace: 'Team A', cacheSizeLimit: '-5Gi' })).toEqual([
      expect.stringMatching(/^namespace: "Team A" is not a DNS-1123 label/),
      expect.stringMatching(/^cacheSizeLimit: "-5Gi" is not a Kubernetes quantity/),
    ]);
  });

  test('volume handles are unique: a name that collides with a per-zone name is refused', () => {
    const problems = csiInputProblems(
      input('m5.large', {
        volumes: [
          { name: 'data', bucket: 'b1', cache: 'express' },
          { name: 'data-use1-az4', bucket: 'b2', cache: 'local' },
        ],
      }),
    );
    expect(problems.map((p) => p.problem)).toEqual([
      expect.stringMatching(/"data-use1-az4" is rendered twice/),
    ]);
  });

  test.each([
    ['10Gi', true],
    ['500m', true],
    ['1.5', true],
    ['2e3', true],
    ['.5Mi', true],
    ['1GB', false],
    ['10 Gi', false],
    ['Gi', false],
    ['-1', false],
    ['', false],
  ])('quantity %p → %p', (text, ok) => {
    expect(isKubernetesQuantity(text)).toBe(ok);
  });
});
