/**
 * The submitter's side of `batch submit` (core/batch/invoke.ts) when it stops waiting: the fleet's submit function
 * (behind the Lambda Invoke stand-in, test/support/lambda-invoke-standin.ts) has the request and goes on; the
 * submitter ends with exit 130, naming the job the function submits and how to find it.
 */
import { batchClient, ec2Client, lambdaClient } from '../../../core/aws/clients';
import { submitThroughFunction } from '../../../core/batch/invoke';
import { EXIT_STATUS, MountfleetError } from '../../../core/common/errors';
import { useEmulator } from '../../support/emulator';
import { LambdaInvokeStandIn } from '../../support/lambda-invoke-standin';
import { createBatchFleet } from './batch-fleet';

describe('submitThroughFunction, stopped while the function runs', () => {
  const emu = useEmulator();
  let lambda: LambdaInvokeStandIn;
  let invoked: () => void;
  let finish: () => void;

  beforeAll(async () => {
    lambda = await LambdaInvokeStandIn.start(async () => {
      invoked();
      // The function goes on after the submitter stops waiting; it answers once the test lets it.
      await new Promise<void>((resolve) => (finish = resolve));
      return { status: 'refused', message: 'too late to matter' };
    });
    process.env.AWS_ENDPOINT_URL_LAMBDA = lambda.endpoint;
  });
  afterAll(async () => {
    delete process.env.AWS_ENDPOINT_URL_LAMBDA;
    await lambda.stop();
  });

  it('ends with exit 130 and names the job it generated, with the command that finds it', async () => {
    await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
    const reached = new Promise<void>((resolve) => (invoked = resolve));
    const stop = new AbortController();
    const submitting = submitThroughFunction(
      { batch: batchClient(), lambda: lambdaClient(60_000) },
      { queue: 'f1-az0', jobDefinition: 'f1-job', command: ['x'], scratch: false, attempts: 1 },
      { signal: stop.signal },
    );
    const outcome = submitting.catch((err: unknown) => err);
    await reached;
    stop.abort('SIGINT');
    const err = await outcome;
    finish();

    expect(err).toBeInstanceOf(MountfleetError);
    expect((err as MountfleetError).exitStatus).toBe(EXIT_STATUS.interrupted);
    const jobName = /submits job (job-\d{8}t\d{6}-[0-9a-f]{6}) /.exec((err as Error).message)?.[1];
    expect(jobName).toBeDefined();
    expect((err as Error).message).toContain(
      `\`aws batch list-jobs --job-queue f1-az0 --filters name=JOB_NAME,values=${jobName}\` finds it`,
    );
    // The function was asked under that name.
    expect(lambda.invocations.at(-1)?.payload).toMatchObject({ jobName });
  });
});
