/**
 * A BatchComputeFleet in a test stack: fleet `train` in two zones, scratch, an Express cache, one immutable
 * read-only mount and one read-write mount, over props a test overrides.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  BatchComputeFleet,
  ExpressCache,
  FleetNetwork,
  ScratchFileSystems,
  type BatchComputeFleetProps,
} from '../../lib';
import { batchTeardownBundleDir } from '../../lib/batch-scratch-teardown';
import { AZS, ensureBundles, testStack } from './support';

/**
 * The bundles, and the Batch teardown's: until lambda/batch-teardown exists (another change writes it) a
 * one-line stand-in in dist/ lets the construct load its asset. Named a stand-in; never shipped (dist/ is built).
 */
export function ensureBatchBundles(): void {
  ensureBundles();
  const dir = batchTeardownBundleDir();
  if (!existsSync(join(dir, 'index.js'))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'index.js'),
      '// stand-in for the Batch teardown bundle (test fixture): lambda/batch-teardown is not built yet\n',
    );
  }
}

export function batchFleetStack(
  overrides: Partial<BatchComputeFleetProps> = {},
  opts: { scratch?: boolean; networkAzIds?: string[]; mountPaths?: string[] } = {},
) {
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: opts.networkAzIds ?? AZS });
  const expressCache = new ExpressCache(stack, 'Cache', { azIds: opts.networkAzIds ?? AZS });
  const scratch =
    (opts.scratch ?? true)
      ? new ScratchFileSystems(stack, 'Scratch', { fleetId: 'train', network })
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
