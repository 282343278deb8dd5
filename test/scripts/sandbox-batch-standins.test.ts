/**
 * The sandbox's Batch stand-ins (scripts/sandbox/batch-*.ts), each against what it stands in for: the
 * scheduler stand-in against moto's Docker-less Batch (which alone would say SUCCEEDED at once), the
 * container stand-in with real mounts in a namespace of its own, and the event routing's pattern matching.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchClient,
  CancelJobCommand,
  CreateComputeEnvironmentCommand,
  CreateJobQueueCommand,
  DescribeJobsCommand,
  RegisterJobDefinitionCommand,
  SubmitJobCommand,
  TerminateJobCommand,
} from '@aws-sdk/client-batch';
import { clientConfig } from '../../core/aws/clients';
import { startContainer } from '../../scripts/sandbox/batch-container';
import { createBatchServiceLinkedRole } from '../../scripts/sandbox/batch-deploy';
import { matchesPattern } from '../../scripts/sandbox/batch-events';
import {
  BatchSchedulerStandIn,
  CONTAINER_EXITED,
  hostTerminatedReason,
} from '../../scripts/sandbox/batch-scheduler';
import { useEmulator } from '../support/emulator';

const emu = useEmulator();

describe('scheduler stand-in over moto', () => {
  let scheduler: BatchSchedulerStandIn;
  let viaStandIn: BatchClient;
  let motoItself: BatchClient;
  let queue: string;
  let definition: string;

  beforeEach(async () => {
    scheduler = await BatchSchedulerStandIn.start(emu.endpoint);
    viaStandIn = new BatchClient({ ...clientConfig(), region: 'us-east-1', endpoint: scheduler.endpoint });
    motoItself = new BatchClient({ ...clientConfig(), region: 'us-east-1', endpoint: emu.endpoint });
    const serviceRole = await createBatchServiceLinkedRole(emu.endpoint);
    const ce = await motoItself.send(
      new CreateComputeEnvironmentCommand({
        computeEnvironmentName: 'sandbox-ce',
        type: 'UNMANAGED',
        serviceRole,
      }),
    );
    queue = (
      await motoItself.send(
        new CreateJobQueueCommand({
          jobQueueName: 'sandbox-queue',
          priority: 1,
          state: 'ENABLED',
          computeEnvironmentOrder: [{ order: 1, computeEnvironment: ce.computeEnvironmentArn! }],
        }),
      )
    ).jobQueueArn!;
    definition = (
      await motoItself.send(
        new RegisterJobDefinitionCommand({
          jobDefinitionName: 'jd',
          type: 'container',
          containerProperties: { image: 'busybox', vcpus: 1, memory: 128, command: ['true'] },
        }),
      )
    ).jobDefinitionArn!;
  });
  afterEach(() => scheduler.stop());
  afterAll(() =>
    fetch(`${emu.endpoint}/moto-api/config`, {
      method: 'POST',
      body: JSON.stringify({ batch: { use_docker: true } }),
    }),
  );

  const submit = async (name: string) =>
    (
      await viaStandIn.send(
        new SubmitJobCommand({ jobName: name, jobQueue: queue, jobDefinition: definition }),
      )
    ).jobId!;
  const describe = async (client: BatchClient, jobId: string) =>
    (await client.send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs![0];

  it('shows a submitted job RUNNABLE where moto alone says SUCCEEDED, then its real ending', async () => {
    const jobId = await submit('fails');
    expect((await describe(motoItself, jobId)).status).toBe('SUCCEEDED');
    expect((await describe(viaStandIn, jobId)).status).toBe('RUNNABLE');
    scheduler.place(jobId, 'i-0123456789abcdef0');
    scheduler.running(jobId);
    expect((await describe(viaStandIn, jobId)).status).toBe('RUNNING');
    scheduler.end(jobId, { exitCode: 3 });
    const ended = await describe(viaStandIn, jobId);
    expect(ended).toMatchObject({ status: 'FAILED', statusReason: CONTAINER_EXITED });
    expect(ended.attempts).toHaveLength(1);
    expect(ended.attempts![0].container?.exitCode).toBe(3);
    expect(scheduler.jobs.get(jobId)!.history).toEqual([
      'SUBMITTED',
      'PENDING',
      'RUNNABLE',
      'STARTING',
      'RUNNING',
      'FAILED',
    ]);
  });

  it('CancelJob fails a job that has not started, and leaves a running one to TerminateJob', async () => {
    const waiting = await submit('waiting');
    await viaStandIn.send(new CancelJobCommand({ jobId: waiting, reason: 'not needed' }));
    expect(await describe(viaStandIn, waiting)).toMatchObject({
      status: 'FAILED',
      statusReason: 'not needed',
    });

    const running = await submit('running');
    scheduler.place(running, 'i-0123456789abcdef0');
    scheduler.running(running);
    const terminated: string[] = [];
    scheduler.onTerminate((job, reason) => terminated.push(`${job.jobId}: ${reason}`));
    await viaStandIn.send(new CancelJobCommand({ jobId: running, reason: 'too late' }));
    expect((await describe(viaStandIn, running)).status).toBe('RUNNING');
    await viaStandIn.send(new TerminateJobCommand({ jobId: running, reason: 'stop it' }));
    expect(terminated).toEqual([`${running}: stop it`]);
    scheduler.end(running, { statusReason: hostTerminatedReason('i-0123456789abcdef0') });
    expect(await describe(viaStandIn, running)).toMatchObject({
      status: 'FAILED',
      statusReason: 'Host EC2 (instance i-0123456789abcdef0) terminated.',
    });
  });
});

describe('container stand-in', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mf-container-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the command with Batch's variables, the host volume read-only and the EFS volume through the helper", async () => {
    const host = join(dir, 'host', 'mnt', 'data');
    mkdirSync(host, { recursive: true });
    writeFileSync(join(host, 'shard.txt'), 'dataset bytes\n');
    const c = startContainer({
      jobId: 'job-1',
      attempt: 1,
      queueName: 'queue-az4',
      computeEnvironmentName: 'ce-az4',
      command: [
        'sh',
        '-c',
        'echo "$AWS_BATCH_JOB_ID $AWS_BATCH_JOB_ATTEMPT $AWS_BATCH_JQ_NAME $AWS_BATCH_CE_NAME $MINE"; cat /data/shard.txt; ' +
          'touch /data/x 2>/dev/null && echo WROTE || echo read-only; echo kept > /scratch/f; cat /scratch/f; exit 3',
      ],
      environment: { MINE: 'a b' },
      binds: [{ hostPath: host, containerPath: '/data', readOnly: true }],
      efs: [{ fileSystemId: 'fs-0123456789abcdef0', containerPath: '/scratch' }],
      dir: join(dir, 'c'),
    });
    expect(await c.exited).toBe(3);
    expect(c.output().trim().split('\n')).toEqual([
      'job-1 1 queue-az4 ce-az4 a b',
      'dataset bytes',
      'read-only',
      'kept',
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'c', 'efs-mounts.jsonl'), 'utf8'))).toEqual([
      'fs-0123456789abcdef0:/',
      join(dir, 'c', 'root', 'scratch'),
      '-o',
      'tls,iam',
    ]);
    // Its mounts lived in its own namespace: nothing of it is mounted here.
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir);
  });

  it('kill() ends everything in it at once', async () => {
    const c = startContainer({
      jobId: 'job-2',
      attempt: 1,
      queueName: 'q',
      computeEnvironmentName: 'sandbox-ce',
      command: ['sh', '-c', 'echo started; sleep 600'],
      environment: {},
      binds: [],
      efs: [],
      dir: join(dir, 'c'),
    });
    await new Promise<void>((resolve) => {
      const t = setInterval(() => c.output().includes('started') && (clearInterval(t), resolve()), 20);
    });
    c.kill();
    expect(await c.exited).toBeNull();
  });

  it('holds standard input open until closeInput(): a job reading it runs until killed, or ends at end of file', async () => {
    const spec = (jobId: string) => ({
      jobId,
      attempt: 1,
      queueName: 'q',
      computeEnvironmentName: 'sandbox-ce',
      command: ['sh', '-c', 'echo started; cat > /dev/null; echo finished'],
      environment: {},
      binds: [],
      efs: [],
      dir: join(dir, jobId),
    });
    const started = (c: { output(): string }) =>
      new Promise<void>((resolve) => {
        const t = setInterval(() => c.output().includes('started') && (clearInterval(t), resolve()), 20);
      });
    const held = startContainer(spec('held'));
    const closed = startContainer(spec('closed'));
    await Promise.all([started(held), started(closed)]);
    closed.closeInput();
    expect(await closed.exited).toBe(0);
    expect(closed.output()).toContain('finished');
    // The held one is still reading (it would have ended with the other had its input closed too).
    expect(held.output()).not.toContain('finished');
    held.kill();
    expect(await held.exited).toBeNull();
    expect(held.output()).not.toContain('finished');
  });
});

describe("event routing: EventBridge's matching of the teardown rule's pattern", () => {
  const pattern = {
    source: ['aws.batch'],
    'detail-type': ['Batch Job State Change'],
    detail: { status: ['SUCCEEDED', 'FAILED'], jobQueue: ['arn:q1'] },
  };
  const event = (status: string, jobQueue = 'arn:q1') => ({
    source: 'aws.batch',
    'detail-type': 'Batch Job State Change',
    detail: { status, jobQueue, jobId: 'j' },
  });

  it('matches a final state of the fleet queue only', () => {
    expect(matchesPattern(pattern, event('FAILED'))).toBe(true);
    expect(matchesPattern(pattern, event('RUNNING'))).toBe(false);
    expect(matchesPattern(pattern, event('SUCCEEDED', 'arn:other'))).toBe(false);
  });

  it('refuses a content filter it does not stand in for', () => {
    expect(() => matchesPattern({ source: [{ prefix: 'aws.' }] }, event('FAILED'))).toThrow(/content filter/);
  });
});
