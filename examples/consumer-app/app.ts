// A CDK app that uses mountfleet as a construct library, the way a user would after `npm install mountfleet`.
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ComputeFleet, ExpressCache, FleetNetwork, OrphanReaper, ScratchFileSystems } from 'mountfleet';

const app = new App();
const stack = new Stack(app, 'TrainingFleet', { env: { region: 'us-east-1' } });
const fleetId = 'training';

// Subnets by AZ ID, so instances sit where the Express cache buckets are.
const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4', 'use1-az6'] });
const cache = new ExpressCache(stack, 'Cache', {
  azIds: ['use1-az4', 'use1-az6'],
  expiration: Duration.days(3),
});
const scratch = new ScratchFileSystems(stack, 'Scratch', { fleetId, network });

const datasets = s3.Bucket.fromBucketName(stack, 'Datasets', 'my-datasets');
new ComputeFleet(stack, 'Fleet', {
  fleetId,
  network,
  expressCache: cache,
  scratch,
  instanceTypes: ['g5.xlarge', 'g6.xlarge'],
  maxCapacity: 8,
  mounts: [
    { bucket: datasets, prefix: 'imagenet/', path: '/mnt/imagenet', dataset: 'immutable' },
    {
      bucket: datasets,
      prefix: 'checkpoints/',
      path: '/mnt/checkpoints',
      access: 'read-write',
      cache: 'none',
    },
  ],
});
new OrphanReaper(stack, 'Reaper', { fleetId, network, deletionAlarmThreshold: 10 });

app.synth();
