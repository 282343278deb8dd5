/** runScratchJob with the burst-credit guard, in-process against the emulator: its report, and its last read. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EFSClient } from '@aws-sdk/client-efs';
import { clientConfig, cloudWatchClient, ec2Client } from '../../../core/aws/clients';
import { runScratchJob, type ScratchJobRequest } from '../../../core/scratch/lifecycle';
import { useEmulator } from '../../support/emulator';
import { useFaultProxy } from '../../support/fault-proxy';
import { createNetwork, type TestNetwork } from '../../support/fixtures';
import { scratchRunRequest } from './run-request';

describe('runScratchJob with the credit guard (emulator)', () => {
  const emu = useEmulator();
  const faults = useFaultProxy(emu, { services: ['cloudwatch'] });
  let net: TestNetwork;
  let dir: string;
  let log: string[];

  beforeEach(async () => {
    net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    dir = mkdtempSync(join(tmpdir(), 'mf-lifecycle-credit-'));
    log = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const request = (overrides: Partial<ScratchJobRequest> = {}): ScratchJobRequest =>
    scratchRunRequest(new EFSClient(clientConfig({ maxAttempts: 1 })), net, dir, log, {
      creditGuard: {
        cloudwatch: cloudWatchClient({ maxAttempts: 1 }),
        intervalSeconds: 60,
        onCreditLow: 'warn',
      },
      ...overrides,
    });

  it('reports what the guard measured, after one last read of CloudWatch', async () => {
    const result = await runScratchJob(request());
    expect(result.exitStatus).toBe(0);
    expect(result.credit).toMatchObject({
      checks: 1,
      meteredIoBytes: null, // a new file system: no datapoints yet
      burstCreditUsedBytes: null,
      nfsMeteredBytes: null, // the stand-in mount is a tmpfs
      seconds: expect.any(Number),
    });
    expect(faults.proxy.count('cloudwatch', 'GetMetricData')).toBe(1);
  });

  it('skips the last read when the instance is going away: teardown gets every second', async () => {
    const started = join(dir, 'started');
    const result = await runScratchJob(
      request({
        command: '/bin/sh',
        args: ['-c', `touch '${started}'; sleep 30`],
        readTerminationNotice: async () =>
          existsSync(started)
            ? { source: 'spot', action: 'terminate', time: new Date(Date.now() + 120_000) }
            : undefined,
        terminationPollMs: 100,
      }),
    );
    expect(result.stoppedBy).toBe('spot');
    expect(result.credit?.checks).toBe(0);
    expect(faults.proxy.count('cloudwatch', 'GetMetricData')).toBe(0);
    expect(result.teardown.status).toBe('deleted');
  });

  it('runs without a guard when none is asked for', async () => {
    const result = await runScratchJob(request({ creditGuard: undefined }));
    expect(result.credit).toBeUndefined();
    expect(faults.proxy.count('cloudwatch', 'GetMetricData')).toBe(0);
  });
});
