// The tuning planner's steps one by one (planMounts puts them together; tuning.test.ts checks the whole).
import { parseAgentConfig } from '../../../core/contract/agent-config';
import { planCacheVolumeForType } from '../../../core/tuner/cache-volume';
import { lookupInstanceType } from '../../../core/instance/instance-type-lookup';
import { planNetwork } from '../../../core/tuner/host-profile';
import { failoverFor } from '../../../core/tuner/mount-profile';

const facts = (type: string) => lookupInstanceType(type, undefined, () => undefined);

describe('planNetwork', () => {
  test('a burstable type targets its baseline, rounded up to the 1 Gbps minimum, split over the mounts', async () => {
    const network = planNetwork(await facts('t3.large'), undefined, 2);
    expect(network).toMatchObject({ bind: [], perMountGbps: 1 });
    expect(network.decisions.map((d) => d.setting)).toEqual(['network target']);
    expect(network.decisions[0].value).toBe('1 Gbps for the host, 1 Gbps per mount');
  });

  test('a two-card type binds one interface per card when it has them, and says why not otherwise', async () => {
    const instance = await facts('c6in.32xlarge');
    const bound = planNetwork(instance, ['ens5', 'ens6', 'ens7'], 1);
    expect(bound.bind).toEqual(['ens5', 'ens6']);
    expect(bound.perMountGbps).toBe(400);
    const unknown = planNetwork(instance, undefined, 1);
    expect(unknown.bind).toEqual([]);
    expect(unknown.perMountGbps).toBe(200);
    expect(unknown.decisions[0]).toMatchObject({ setting: '--bind', value: '(not set)' });
    expect(unknown.decisions[0].reason).toMatch(/pass --interfaces/);
  });
});

describe('failoverFor', () => {
  const config = parseAgentConfig(
    {
      version: 1,
      fleetId: 'f',
      region: 'us-east-1',
      mounts: [
        { bucket: 'my-datasets', path: '/mnt/a', cache: 'local+express' },
        { bucket: 'my-datasets', path: '/mnt/b', cache: 'local' },
      ],
      expressCache: { buckets: { 'use1-az4': 'cache--use1-az4--x-s3' } },
    },
    '(test)',
  );

  test('only a mount that uses the Express cache, in a zone that has a bucket, gets the failover pair', async () => {
    const instance = await facts('m6i.large');
    const input = (azId?: string) => ({
      config,
      instance,
      memory: { totalMiB: instance.memoryMiB, source: 'test' },
      cacheVolume: planCacheVolumeForType(instance),
      ...(azId ? { azId } : {}),
    });
    expect(config.mounts.map((m) => failoverFor(input('use1-az4'), m))).toEqual([true, false]);
    expect(config.mounts.map((m) => failoverFor(input('use1-az6'), m))).toEqual([false, false]);
    expect(config.mounts.map((m) => failoverFor(input(), m))).toEqual([false, false]);
  });
});
