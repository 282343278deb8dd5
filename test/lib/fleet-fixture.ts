/** A ComputeFleet in a test stack, with or without scratch, with the construct props a test overrides. */
import { Stack, type App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  ComputeFleet,
  ExpressCache,
  FleetNetwork,
  ScratchFileSystems,
  type ComputeFleetProps,
  type IFleetNetwork,
  type IScratchFileSystems,
} from '../../lib';
import { AZS, fastApp, testStack } from './support';

export interface FleetFixtureOptions {
  /** Props of the fleet over the defaults (fleet id `train`, one read-only mount), or a function of the stack. */
  readonly props?: Partial<ComputeFleetProps> | ((stack: Stack) => Partial<ComputeFleetProps>);
  /** Whether the fleet has scratch file systems. @default true */
  readonly scratch?: boolean;
  /** The fleet id of the scratch file systems. @default the fleet's */
  readonly scratchFleetId?: string;
  /** The app. @default - a fast app (no asset bundling) */
  readonly app?: App;
  /** A stack without env (account and Region resolve at deploy). @default false */
  readonly envAgnostic?: boolean;
}

export function buildFleet(o: FleetFixtureOptions = {}) {
  const app = o.app ?? fastApp();
  const stack = o.envAgnostic ? new Stack(app, 'Agnostic') : testStack(app);
  const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4', 'use1-az6'] });
  const expressCache = new ExpressCache(stack, 'Cache', { azIds: ['use1-az4', 'use1-az6'] });
  const props = typeof o.props === 'function' ? o.props(stack) : (o.props ?? {});
  const fleetId = props.fleetId ?? 'train';
  const scratch =
    (o.scratch ?? true)
      ? new ScratchFileSystems(stack, 'Scratch', { fleetId: o.scratchFleetId ?? fleetId, network })
      : undefined;
  const data = s3.Bucket.fromBucketName(stack, 'Data', 'my-datasets');
  const fleet = new ComputeFleet(stack, 'Fleet', {
    fleetId,
    network,
    expressCache,
    scratch,
    mounts: [{ bucket: data, prefix: 'imagenet/', path: '/mnt/imagenet', dataset: 'immutable' }],
    ...props,
  });
  return { stack, network, expressCache, scratch, fleet, template: () => Template.fromStack(stack) };
}

/**
 * A fleet of the construct tests: fleet `train` with scratch and an Express cache, one immutable read-only
 * mount and one read-write mount without cache, over props a test overrides, the zones it picks and, when
 * given, its own scratch.
 */
export function fleetStack(
  overrides: Partial<ComputeFleetProps> = {},
  opts: { cacheAzIds?: string[]; networkAzIds?: string[] } = {},
  scratchOf: (stack: Stack, network: IFleetNetwork) => IScratchFileSystems = (stack, network) =>
    new ScratchFileSystems(stack, 'Scratch', { fleetId: 'train', network }),
) {
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: opts.networkAzIds ?? AZS });
  const expressCache = new ExpressCache(stack, 'Cache', { azIds: opts.cacheAzIds ?? AZS });
  const scratch = scratchOf(stack, network);
  const data = s3.Bucket.fromBucketName(stack, 'Data', 'my-datasets');
  const fleet = new ComputeFleet(stack, 'Fleet', {
    fleetId: 'train',
    network,
    expressCache,
    scratch,
    mounts: [
      { bucket: data, prefix: 'imagenet/', path: '/mnt/imagenet', dataset: 'immutable' },
      { bucket: data, prefix: 'outputs/', path: '/mnt/outputs', access: 'read-write', cache: 'none' },
    ],
    ...overrides,
  });
  return { stack, network, expressCache, scratch, fleet, template: () => Template.fromStack(stack) };
}
