/**
 * The Batch teardown Lambda handler, invoked directly against the emulator (moto's Lambda cannot run it and
 * moto emits no Batch events): the "Batch Job State Change" event is built by a stand-in for EventBridge from
 * DescribeJobs. Checks the environment it reads (BATCH_FUNCTION_ENV) and its log lines.
 */
import { DescribeJobsCommand } from '@aws-sdk/client-batch';
import { DescribeFileSystemsCommand } from '@aws-sdk/client-efs';
import { batchClient, ec2Client, efsClient } from '../../core/aws/clients';
import { batchSettingsFromEnv, submitBatchJob } from '../../core/batch';
import { BATCH_FUNCTION_ENV } from '../../core/contract/batch-submit';
import { useEmulator } from '../support/emulator';
import { captureHandlerLogs } from './handler-logs';
import { MOUNT_PATHS, createBatchFleet } from '../core/batch/batch-fleet';

type Handler = typeof import('../../lambda/batch-teardown/index').handler;

describe('Batch teardown Lambda handler (emulator)', () => {
  const emu = useEmulator();
  let handler: Handler;
  let logs: ReturnType<typeof captureHandlerLogs>;

  beforeAll(() => {
    // The handler builds its clients at module load, as in a Lambda container.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    handler = (require('../../lambda/batch-teardown/index') as { handler: Handler }).handler;
  });
  beforeEach(() => {
    logs = captureHandlerLogs();
  });
  afterEach(() => {
    logs.restore();
    for (const name of Object.values(BATCH_FUNCTION_ENV)) delete process.env[name];
  });

  const logged = () => logs.lines();

  it('tears a run down with the fleet and queues from its environment, and logs what it did', async () => {
    const fleet = await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
    process.env[BATCH_FUNCTION_ENV.fleetId] = 'f1';
    process.env[BATCH_FUNCTION_ENV.queueArns] =
      `arn:aws:batch:us-east-1:123456789012:job-queue/other,${fleet.queueArn}`;
    process.env[BATCH_FUNCTION_ENV.mountPaths] = MOUNT_PATHS.join(':');
    process.env[BATCH_FUNCTION_ENV.jobRoleArn] = fleet.roleArn;
    const run = await submitBatchJob(
      { batch: batchClient(), efs: efsClient(), ec2: ec2Client() },
      batchSettingsFromEnv(),
      {
        queue: fleet.queue,
        jobDefinition: fleet.jobDefinition,
        command: ['true'],
        scratch: true,
        attempts: 1,
      },
    );
    const job = (await batchClient().send(new DescribeJobsCommand({ jobs: [run.jobId] }))).jobs![0];
    // Stand-in for EventBridge: Batch's event carries the JobDetail as its detail.
    const event = { source: 'aws.batch', 'detail-type': 'Batch Job State Change', detail: job };

    const outcome = await handler(event);
    const ignored = await handler({
      ...event,
      detail: { ...job, jobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/x' },
    });

    expect(outcome).toMatchObject({ status: 'torn-down', fileSystem: 'deleted', revision: 'deregistered' });
    expect(ignored).toMatchObject({ status: 'ignored' });
    const fss = (await efsClient().send(new DescribeFileSystemsCommand({}))).FileSystems ?? [];
    expect(fss.filter((f) => f.LifeCycleState !== 'deleted')).toEqual([]);
    expect(logged()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          message: 'run torn down',
          fleet: 'f1',
          jobId: run.jobId,
          fileSystem: 'deleted',
        }),
        expect.objectContaining({
          message: 'event ignored',
          reason: expect.stringMatching(/job-queue\/x, not a queue of fleet f1$/),
        }),
      ]),
    );
    // One line per ignored event.
    expect(logged().filter((l) => l.message === 'event ignored')).toHaveLength(1);
  });

  it('refuses to run without its settings, naming the variable', async () => {
    await expect(handler({})).rejects.toThrow(`${BATCH_FUNCTION_ENV.fleetId} is not set`);
    process.env[BATCH_FUNCTION_ENV.fleetId] = 'f1';
    process.env[BATCH_FUNCTION_ENV.queueArns] = 'arn:aws:batch:us-east-1:123456789012:job-queue/q';
    await expect(handler({})).rejects.toThrow(`${BATCH_FUNCTION_ENV.jobRoleArn} is not set`);
  });
});
