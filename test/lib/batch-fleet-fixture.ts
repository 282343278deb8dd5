/**
 * A BatchComputeFleet in a test stack: fleet `train` in two zones, scratch, an Express cache, one immutable
 * read-only mount and one read-write mount, over props a test overrides.
 */
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  BatchComputeFleet,
  ExpressCache,
  FleetNetwork,
  ScratchFileSystems,
  type BatchComputeFleetProps,
} from '../../lib';
import { AZS, testStack } from './support';

export function batchFleetStack(
  overrides: Partial<BatchComputeFleetProps> = {},
  opts: { scratch?: boolean; scratchKey?: boolean; networkAzIds?: string[]; mountPaths?: string[] } = {},
) {
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: opts.networkAzIds ?? AZS });
  const expressCache = new ExpressCache(stack, 'Cache', { azIds: opts.networkAzIds ?? AZS });
  const scratch =
    (opts.scratch ?? true)
      ? new ScratchFileSystems(stack, 'Scratch', {
          fleetId: 'train',
          network,
          ...(opts.scratchKey ? { encryptionKey: new kms.Key(stack, 'ScratchKey') } : {}),
        })
      : undefined;
  const data = s3.Bucket.fromBucketName(stack, 'Data', 'my-datasets');
  const fleet = new BatchComputeFleet(stack, 'Fleet', {
    fleetId: 'train',
    network,
    expressCache,
    scratch,
    mounts: opts.mountPaths
      ? opts.mountPaths.map((path) => ({ bucket: data, path }))
      : [
          { bucket: data, prefix: 'imagenet/', path: '/mnt/imagenet', dataset: 'immutable' },
          { bucket: data, prefix: 'outputs/', path: '/mnt/outputs', access: 'read-write', cache: 'none' },
        ],
    ...overrides,
  });
  return { stack, network, scratch, fleet, template: () => Template.fromStack(stack) };
}
