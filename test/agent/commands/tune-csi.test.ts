/**
 * `mountfleet tune --csi`: the same PV/PVC pairs the MountpointCsiVolumes construct renders, printed for
 * users who apply manifests themselves; every bad flag is a usage error (exit 2) naming the flag.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planCsiClaims, renderCsiManifests } from '../../../core/tuner/csi-volumes';
import { FALLBACK_INSTANCE_TYPES } from '../../../core/tuner/instance-facts';
import { runCliInProcess as mountfleet } from '../../support/cli';
import { KUBERNETES_VERSIONS, kubernetesValidate } from '../../support/kubernetes-validate';

const TUNE = ['tune', '--instance-type', 'm6id.4xlarge', '--offline', '--csi'];
const VOLUME = ['--bucket', 'my-datasets', '--prefix', 'imagenet/', '--dataset', 'immutable'];
const ZONES = ['--zone-id', 'use1-az4', '--zone-id', 'use1-az6', '--express-bucket-base', 'ml-cache'];

/** The YAML stream back into objects: each document is JSON. */
const documents = (yaml: string) =>
  yaml
    .split(/^---$/m)
    .filter((d) => d.trim())
    .map((d) => JSON.parse(d) as Record<string, unknown>);

test('prints the per-zone PV/PVC pairs the construct renders, valid against the Kubernetes schemas', async () => {
  const r = await mountfleet(...TUNE, ...VOLUME, ...ZONES, '--namespace', 'training');
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('m6id.4xlarge: 2 PV/PVC pair(s)');
  const expected = renderCsiManifests(
    planCsiClaims({
      instance: FALLBACK_INSTANCE_TYPES.get('m6id.4xlarge')!,
      region: 'us-east-1',
      namespace: 'training',
      volumes: [{ name: 'my-datasets', bucket: 'my-datasets', prefix: 'imagenet/', dataset: 'immutable' }],
      expressBuckets: { 'use1-az4': 'ml-cache--use1-az4--x-s3', 'use1-az6': 'ml-cache--use1-az6--x-s3' },
    }),
    'training',
  );
  expect(documents(r.stdout)).toEqual(expected);
  for (const version of KUBERNETES_VERSIONS) expect(kubernetesValidate(r.stdout, version)).toBe('');
});

test('--json prints one v1 List; without --bucket the agent config mounts and cache buckets are used', async () => {
  const config = join(mkdtempSync(join(tmpdir(), 'mf-csi-')), 'agent.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      fleetId: 'train',
      region: 'eu-west-1',
      mounts: [{ bucket: 'my-data', path: '/mnt/train_data', dataset: 'immutable', cache: 'local' }],
      expressCache: { buckets: { 'euw1-az1': 'c--euw1-az1--x-s3' } },
    }),
  );
  const r = await mountfleet(...TUNE, '--config', config, '--json');
  expect(r.code).toBe(0);
  const list = JSON.parse(r.stdout) as {
    kind: string;
    items: Array<{ metadata: { name: string }; spec: { mountOptions?: string[] } }>;
  };
  expect(list.kind).toBe('List');
  expect(list.items.map((i) => i.metadata.name)).toEqual(['mnt-train-data', 'mnt-train-data']);
  expect(list.items[0].spec.mountOptions).toContain('region eu-west-1');
  expect(list.items[0].spec.mountOptions).not.toContainEqual(expect.stringMatching(/^cache-xz/));
});

describe('usage errors exit 2 and name the flag', () => {
  it.each([
    [[...VOLUME, '--zone-id', 'use1-az4'], '--zone-id and --express-bucket-base go together'],
    [
      [...VOLUME, '--zone-id', 'us-east-1a', '--express-bucket-base', 'c'],
      '--zone-id "us-east-1a": must be a zone ID',
    ],
    [
      [...VOLUME, '--zone-id', 'use1-az4', '--express-bucket-base', 'Bad_Base'],
      '--express-bucket-base "Bad_Base"',
    ],
    [['--prefix', 'x/'], '--prefix describes a volume: give --bucket too'],
    [['--bucket', 'B'], '--bucket "B": must be an S3 bucket name'],
    [['--bucket', 'b1x', '--prefix', '/abs'], '--prefix: must be empty or end in "/"'],
    [[...VOLUME, '--namespace', 'Team'], 'namespace: "Team" is not a DNS-1123 label'],
    [[...VOLUME, '--cache-size-limit', '10GB'], 'cacheSizeLimit: "10GB" is not a Kubernetes quantity'],
    [
      [...VOLUME, '--cache', 'express'],
      'volumes[0].cache: cache "express" needs an Express cache bucket per zone',
    ],
    [
      [...VOLUME, '--access', 'read-write', '--prefix', ''],
      'volumes[0].prefix: a read-write volume needs a prefix',
    ],
    [
      [...VOLUME, '--mountpoint-version', 'latest'],
      'mountpointVersion: "latest" is not a Mountpoint release',
    ],
    [['--bucket', 'x', '--access', 'rw'], "argument 'rw' is invalid"],
  ])('%j', async (args, message) => {
    const r = await mountfleet(...TUNE, ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  test('a bucket with no region anywhere', async () => {
    const saved = process.env.AWS_REGION;
    delete process.env.AWS_REGION;
    try {
      const r = await mountfleet(...TUNE, ...VOLUME);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('set AWS_REGION');
    } finally {
      process.env.AWS_REGION = saved;
    }
  });
});
