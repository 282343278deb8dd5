/** The in-process scratch run request the lifecycle tests share: one network, a temp dir, a log, the mount stand-in. */
import { join } from 'node:path';
import type { EFSClient } from '@aws-sdk/client-efs';
import type { ScratchJobRequest } from '../../../core/scratch/lifecycle';
import type { TestNetwork } from '../../support/fixtures';
import { MOUNT_HELPER_STANDIN } from '../../support/standins';

/** A run of job j1 in fleet f1 on instance i-0123456789abcdef0, in the network's first subnet. */
export function scratchRunRequest(
  efs: EFSClient,
  net: TestNetwork,
  dir: string,
  log: string[],
  overrides: Partial<ScratchJobRequest> = {},
): ScratchJobRequest {
  return {
    efs,
    placement: {
      instanceId: 'i-0123456789abcdef0',
      availabilityZone: net.subnets[0].availabilityZone,
      availabilityZoneId: net.subnets[0].availabilityZoneId,
    },
    fleetId: 'f1',
    jobId: 'j1',
    path: join(dir, 'scratch'),
    subnetId: net.subnets[0].subnetId,
    securityGroupId: net.securityGroupId,
    teardownGraceSeconds: 1,
    command: 'true',
    args: [],
    mountHelper: MOUNT_HELPER_STANDIN,
    log: (line) => log.push(line),
    ...overrides,
  };
}
