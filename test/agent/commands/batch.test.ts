/**
 * `mountfleet batch submit|status` run in process against the emulator: what a user sees, and exit statuses. The
 * CLI invokes the fleet's submit function through Lambda's Invoke API; a stand-in for that API
 * (test/support/lambda-invoke-standin.ts: moto runs function code only in Docker) runs the function's core with
 * emulator clients and the fleet's settings, as the deployed function would.
 */
import { batchClient, ec2Client, efsClient } from '../../../core/aws/clients';
import { answerSubmitRequest, type BatchFleetSettings } from '../../../core/batch';
import {
  SUBMIT_FUNCTION_TIMEOUT_MINUTES,
  TAG_BATCH_SUBMIT_FUNCTION,
  submitFunctionName,
} from '../../../core/contract/batch-submit';
import { DescribeFileSystemsCommand, type FileSystemDescription } from '@aws-sdk/client-efs';
import { RegisterJobDefinitionCommand } from '@aws-sdk/client-batch';
import { runCliInProcess } from '../../support/cli';
import { useEmulator } from '../../support/emulator';
import { LambdaInvokeStandIn } from '../../support/lambda-invoke-standin';
import { createBatchFleet, createQueue, fleetSettings, queueTags } from '../../core/batch/batch-fleet';

describe('mountfleet batch (in process, emulator, submit function behind a Lambda stand-in)', () => {
  const emu = useEmulator();
  let lambda: LambdaInvokeStandIn;
  let settings: BatchFleetSettings;
  let fleet: Awaited<ReturnType<typeof createBatchFleet>>;
  let failWith: Error | undefined;
  const liveFileSystems = async (): Promise<FileSystemDescription[]> =>
    ((await efsClient().send(new DescribeFileSystemsCommand({}))).FileSystems ?? []).filter(
      (f) => f.LifeCycleState !== 'deleted',
    );

  beforeAll(async () => {
    lambda = await LambdaInvokeStandIn.start(async (name, payload) => {
      if (name !== submitFunctionName('f1')) throw new Error(`no function ${name}`);
      if (failWith) throw failWith;
      const clients = { batch: batchClient(), efs: efsClient(), ec2: ec2Client() };
      return answerSubmitRequest(clients, settings, payload, {
        remainingMs: SUBMIT_FUNCTION_TIMEOUT_MINUTES * 60_000,
      });
    });
    process.env.AWS_ENDPOINT_URL_LAMBDA = lambda.endpoint;
  });
  afterAll(async () => {
    delete process.env.AWS_ENDPOINT_URL_LAMBDA;
    await lambda.stop();
  });
  beforeEach(async () => {
    failWith = undefined;
    lambda.invocations.length = 0;
    fleet = await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
    settings = fleetSettings(fleet);
  });

  it('submit prints the job id; --json the whole result; status follows it', async () => {
    const plain = await runCliInProcess(
      'batch',
      'submit',
      '--queue',
      'f1-az0',
      '--job-definition',
      'f1-job',
      '--',
      'echo',
      'hi',
    );
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    expect(plain.stderr).toMatch(
      /mountfleet batch: asking mountfleet-f1-batch-submit to submit job-\d{8}t\d{6}-/,
    );

    const json = await runCliInProcess(
      'batch',
      'submit',
      '--queue',
      'f1-az0',
      '--job-definition',
      'f1-job',
      '--scratch',
      '--json',
      '--expected-io',
      '10GiB',
      '--attempts',
      '3',
      '--job-name',
      'encode-1',
      '--',
      './encode.sh',
    );
    expect(json.code).toBe(0);
    const result = JSON.parse(json.stdout) as {
      jobId: string;
      scratch: { fileSystemId: string; path: string };
    };
    expect(result).toMatchObject({ jobName: 'encode-1', attempts: 3, scratch: { path: '/scratch' } });
    // The function's own log lines reach the user.
    expect(json.stderr).toMatch(
      /mountfleet batch: expected I\/O 0\.01 TiB fits in the 2\.1 TiB initial burst credit/,
    );
    // What the function was sent: the request and nothing else.
    expect(lambda.invocations.at(-1)).toEqual({
      functionName: 'mountfleet-f1-batch-submit',
      invocationType: 'RequestResponse',
      payload: {
        queue: 'f1-az0',
        jobDefinition: 'f1-job',
        command: ['./encode.sh'],
        scratch: true,
        expectedIoBytes: 10 * 2 ** 30,
        attempts: 3,
        jobName: 'encode-1',
      },
    });

    const status = await runCliInProcess('batch', 'status', result.jobId);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(
        `^job ${result.jobId} \\(encode-1\\): SUCCEEDED, attempt 1 of 3, fleet f1\\n  attempt 1: ${result.jobId} SUCCEEDED, zone use1-az\\d, ${result.scratch.fileSystemId} exists\\n$`,
      ),
    );
  });

  it('a hostile job definition is refused by the function: exit 2, the field named, nothing created', async () => {
    await batchClient().send(
      new RegisterJobDefinitionCommand({
        jobDefinitionName: 'own-the-host',
        type: 'container',
        containerProperties: {
          image: 'public.ecr.aws/docker/library/busybox:stable',
          jobRoleArn: settings.jobRoleArn,
          resourceRequirements: [
            { type: 'VCPU', value: '1' },
            { type: 'MEMORY', value: '512' },
          ],
          volumes: [{ name: 'docker', host: { sourcePath: '/var/run/docker.sock' } }],
          mountPoints: [{ sourceVolume: 'docker', containerPath: '/var/run/docker.sock', readOnly: false }],
        },
      }),
    );

    const r = await runCliInProcess(
      'batch',
      'submit',
      '--queue',
      'f1-az0',
      '--job-definition',
      'own-the-host',
      '--scratch',
      '--',
      'sh',
    );

    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--job-definition own-the-host: refused, .*\n\s+containerProperties\.volumes\[0\]\.host\.sourcePath \/var\/run\/docker\.sock: not one of the fleet's Mountpoint paths/,
    );
    expect(r.stdout).toBe('');
    expect(await liveFileSystems()).toEqual([]);
  });

  it("a failed invocation is a failure (exit 1) with the function's error", async () => {
    failWith = new Error('BatchSubmitError: run r1: could not submit the job; rolled back');
    const r = await runCliInProcess(
      'batch',
      'submit',
      '--queue',
      'f1-az0',
      '--job-definition',
      'f1-job',
      '--',
      'x',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /mountfleet-f1-batch-submit failed: Error: BatchSubmitError: run r1: could not submit the job/,
    );
  });

  it('bad input exits 2 with the flag named: unknown queue, a queue with no function, --attempts out of range, a bad --job-name, an unknown job', async () => {
    await createQueue(batchClient(), fleet.computeEnvironment, 'no-function', {
      ...queueTags(fleet.net),
      [TAG_BATCH_SUBMIT_FUNCTION]: undefined,
    });
    const cases = [
      [
        ['batch', 'submit', '--queue', 'nope', '--job-definition', 'f1-job', '--', 'x'],
        /mountfleet batch: --queue nope: no such job queue/,
      ],
      [
        ['batch', 'submit', '--queue', 'no-function', '--job-definition', 'f1-job', '--', 'x'],
        /--queue no-function: the queue carries no mountfleet:submit-function tag/,
      ],
      [
        ['batch', 'submit', '--queue', 'f1-az0', '--job-definition', 'f1-job', '--attempts', '11', '--', 'x'],
        /--attempts/,
      ],
      [
        [
          'batch',
          'submit',
          '--queue',
          'f1-az0',
          '--job-definition',
          'f1-job',
          '--job-name',
          'a b',
          '--',
          'x',
        ],
        /--job-name a b: 1-128 letters/,
      ],
      [['batch', 'status', 'no-such-job'], /mountfleet batch: job no-such-job: Batch knows no such job/],
    ] as const;
    for (const [args, message] of cases) {
      const r = await runCliInProcess(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    // None of them reached the function.
    expect(lambda.invocations).toEqual([]);
  });
});
