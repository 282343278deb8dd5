// The tuner's per-mount steps (plan-mounts.test.ts checks the whole plan).
import { lookupInstanceType } from '../../../core/instance/instance-type-lookup';
import { planCacheVolumeForType } from '../../../core/tuner/cache-volume';
import { failoverFor } from '../../../core/tuner/mount-profile';
import type { MountSettings, TuningHost } from '../../../core/tuner/plan-types';

const facts = (type: string) => lookupInstanceType(type, undefined, () => undefined);

describe('failoverFor', () => {
  const mount = (path: string, cache: MountSettings['cache']): MountSettings => ({
    bucket: 'my-datasets',
    prefix: '',
    path,
    access: 'read-only',
    dataset: 'mutable',
    cache,
  });
  const mounts = [mount('/mnt/a', 'local+express'), mount('/mnt/b', 'local')];

  test('only a mount that uses the Express cache, on a host whose zone has a bucket, gets the failover pair', async () => {
    const instance = await facts('m6i.large');
    const host = (expressBucket?: string): TuningHost => ({
      instance,
      memory: { totalMiB: instance.memoryMiB, source: 'test' },
      cacheVolume: planCacheVolumeForType(instance),
      region: 'us-east-1',
      mountpointVersion: '1.24.0',
      azId: 'use1-az4',
      ...(expressBucket ? { expressBucket } : {}),
    });
    expect(mounts.map((m) => failoverFor(host('cache--use1-az4--x-s3'), m))).toEqual([true, false]);
    expect(mounts.map((m) => failoverFor(host(), m))).toEqual([false, false]);
  });
});
