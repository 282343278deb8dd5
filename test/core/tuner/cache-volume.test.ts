import {
  describeDisks,
  listedInstanceStoreDisks,
  planCacheVolumeForType,
} from '../../../core/tuner/cache-volume';
import { planCsiClaims } from '../../../core/tuner/csi-volumes';
import { lookupInstanceType } from '../../../core/instance/instance-type-lookup';
import { tuneForInstanceType } from '../../../core/instance/tune-report';

const facts = (type: string) => lookupInstanceType(type, undefined, () => undefined);

test('an instance type lists its instance-store disks as a Nitro instance names them, from nvme1n1', async () => {
  expect(listedInstanceStoreDisks(await facts('m6i.large'))).toEqual([]);
  expect(listedInstanceStoreDisks(await facts('m5d.large'))).toEqual([
    { device: '/dev/nvme1n1', sizeBytes: 75e9 },
  ]);
  expect(listedInstanceStoreDisks(await facts('m5d.4xlarge'))).toEqual([
    { device: '/dev/nvme1n1', sizeBytes: 300e9 },
    { device: '/dev/nvme2n1', sizeBytes: 300e9 },
  ]);
});

test('one disk is named alone, several as a range', async () => {
  expect(describeDisks(listedInstanceStoreDisks(await facts('m5d.large')))).toBe('/dev/nvme1n1');
  expect(describeDisks(listedInstanceStoreDisks(await facts('m5d.4xlarge')))).toBe('/dev/nvme1n1..nvme2n1');
});

test('tune names the one disk of a one-disk type, and the range of a several-disk type', async () => {
  const one = await tuneForInstanceType({ instanceType: 'm5d.large' });
  expect(one.assumptions).toContain('instance store as listed for the type: /dev/nvme1n1');
  const several = await tuneForInstanceType({ instanceType: 'm5d.4xlarge' });
  expect(several.assumptions).toContain('instance store as listed for the type: /dev/nvme1n1..nvme2n1');
  const none = await tuneForInstanceType({ instanceType: 'm6i.large' });
  expect(none.assumptions).toContain('root volume free space assumed 20 GiB (--root-free-gib)');
});

test('tune and the EKS volumes plan the same cache volume for a type', async () => {
  for (const type of ['m6i.large', 'm5d.large', 'm5d.4xlarge']) {
    const instance = await facts(type);
    const volume = planCacheVolumeForType(instance);
    expect((await tuneForInstanceType({ instanceType: type })).plan.cacheVolume).toEqual(volume);
    const [claim] = planCsiClaims({
      instance,
      region: 'us-east-1',
      namespace: 'default',
      volumes: [{ name: 'data', bucket: 'my-datasets', dataset: 'immutable', cache: 'local' }],
    });
    const capacity = volume.kind === 'none' ? undefined : `${volume.capacityMiB}Mi`;
    expect(claim.volumeAttributes.cacheEmptyDirSizeLimit).toBe(capacity);
  }
});
