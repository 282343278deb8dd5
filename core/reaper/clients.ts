/**
 * The reaper's AWS clients, as the Lambda and `mountfleet reap` build them. EFS and CloudWatch serve every
 * run; the EC2 client (the heaviest SDK package, ~200 ms to load), the tagging and the Batch clients are built on first
 * use, so runs that look up no owner or mark nothing never pay for loading them.
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';
import { batchClient, cloudWatchClient, ec2Client, efsClient, taggingClient } from '../aws';
import type { ReaperClients } from './reaper';

export function lazyReaperClients(): ReaperClients {
  let ec2: EC2Client | undefined;
  let tagging: ResourceGroupsTaggingAPIClient | undefined;
  let batch: BatchClient | undefined;
  return {
    efs: efsClient(),
    cloudwatch: cloudWatchClient(),
    get ec2() {
      return (ec2 ??= ec2Client());
    },
    get tagging() {
      return (tagging ??= taggingClient());
    },
    get batch() {
      return (batch ??= batchClient());
    },
  };
}
