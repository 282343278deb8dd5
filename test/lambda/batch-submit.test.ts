/**
 * The Batch submit Lambda handler, invoked directly against the emulator (moto's Lambda cannot run it): the settings
 * it reads from its environment (BATCH_FUNCTION_ENV), its answers and its log lines.
 */
import { DescribeFileSystemsCommand } from '@aws-sdk/client-efs';
import type { Context } from 'aws-lambda';
import { batchClient, ec2Client, efsClient } from '../../core/aws/clients';
import { BATCH_FUNCTION_ENV } from '../../core/contract/batch-submit';
import { useEmulator } from '../support/emulator';
import { captureHandlerLogs } from './handler-logs';
import { MOUNT_PATHS, createBatchFleet, registerJobDefinition } from '../core/batch/batch-fleet';

type Handler = typeof import('../../lambda/batch-submit/index').handler;

/** Lambda's context as far as the handler reads it: its remaining time. */
const context = { getRemainingTimeInMillis: () => 900_000 } as Context;

describe('Batch submit Lambda handler (emulator)', () => {
  const emu = useEmulator();
  let handler: Handler;
  let logs: ReturnType<typeof captureHandlerLogs>;

  beforeAll(() => {
    // The handler builds its clients at module load, as in a Lambda container.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    handler = (require('../../lambda/batch-submit/index') as { handler: Handler }).handler;
  });
  beforeEach(() => {
    logs = captureHandlerLogs();
  });
  afterEach(() => {
    logs.restore();
    for (const name of Object.values(BATCH_FUNCTION_ENV)) delete process.env[name];
  });
  const logged = () => logs.lines();

  it("submits with the fleet from its environment, refuses what the fleet's rules refuse, and logs both", async () => {
    const fleet = await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
    await registerJobDefinition(batchClient(), 'elsewhere', { roleArn: fleet.roleArn, mounts: ['/etc'] });
    process.env[BATCH_FUNCTION_ENV.fleetId] = 'f1';
    process.env[BATCH_FUNCTION_ENV.queueArns] = fleet.queueArn;
    process.env[BATCH_FUNCTION_ENV.mountPaths] = MOUNT_PATHS.join(':');
    process.env[BATCH_FUNCTION_ENV.jobRoleArn] = fleet.roleArn;
    const request = { queue: 'f1-az0', command: ['./run.sh'], scratch: true, attempts: 1, jobName: 'j-1' };

    const submitted = await handler({ ...request, jobDefinition: 'f1-job' }, context);
    const refused = await handler({ ...request, jobDefinition: 'elsewhere' }, context);

    expect(submitted).toMatchObject({
      status: 'submitted',
      result: { jobName: 'j-1', fleet: 'f1', scratch: { path: '/scratch' } },
      log: [expect.stringMatching(/^created file system fs-/), expect.stringMatching(/^registered arn:/)],
    });
    expect(refused).toEqual({
      status: 'refused',
      message: expect.stringMatching(
        /^--job-definition elsewhere: refused, .*sourcePath \/etc: not one of the fleet's Mountpoint paths/s,
      ),
    });
    const fss = (await efsClient().send(new DescribeFileSystemsCommand({}))).FileSystems ?? [];
    expect(fss.filter((f) => f.LifeCycleState !== 'deleted')).toHaveLength(1);
    expect(logged()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ message: 'submitted', fleet: 'f1', jobName: 'j-1' }),
        expect.objectContaining({ message: 'refused', fleet: 'f1', reason: expect.stringContaining('/etc') }),
      ]),
    );
  });
});
