/**
 * The Batch teardown and `batch status` against the emulator. The emulator emits no EventBridge events: each
 * test builds the "Batch Job State Change" event a stand-in for EventBridge would deliver, from the job as
 * DescribeJobs shows it (the event's detail is that JobDetail), with the ending a test needs.
 */
import {
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  ListJobsCommand,
  type JobDetail,
} from '@aws-sdk/client-batch';
import { DescribeFileSystemsCommand, EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import { batchClient, clientConfig, cloudWatchClient, ec2Client, efsClient } from '../../../core/aws/clients';
import { batchJobStatus, submitBatchJob, tearDownBatchRun } from '../../../core/batch';
import { TAG_BATCH_ATTEMPT, TAG_BATCH_FIRST_JOB, TAG_BATCH_JOB } from '../../../core/contract/batch';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import { createBatchFleet, fleetSettings, type BatchFleet } from './batch-fleet';

/** Stand-in for EventBridge: the event Batch would emit for `job` (detail = its JobDetail), ending as given. */
function jobStateChange(job: JobDetail, ending: Partial<JobDetail> = {}) {
  return {
    version: '0',
    id: 'event-1',
    'detail-type': 'Batch Job State Change',
    source: 'aws.batch',
    region: 'us-east-1',
    resources: [job.jobArn],
    detail: { ...job, ...ending },
  };
}

const SPOT_RECLAIM = {
  status: 'FAILED',
  statusReason: 'Host EC2 (instance i-0123456789abcdef0) terminated.',
} as const;

describe('batch teardown and status (emulator)', () => {
  const emu = useEmulator();
  let fleet: BatchFleet;
  const clients = () => ({
    batch: batchClient({ maxAttempts: 1 }),
    efs: efsClient({ maxAttempts: 1 }),
    ec2: ec2Client({ maxAttempts: 1 }),
  });
  const settings = () => fleetSettings(fleet);
  const submit = (attempts = 1) =>
    submitBatchJob(clients(), settings(), {
      queue: fleet.queue,
      jobDefinition: fleet.jobDefinition,
      command: ['./train.sh'],
      scratch: true,
      attempts,
      jobName: 'train-7',
    });
  const describeJob = async (jobId: string) =>
    (await batchClient().send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs![0];
  const liveFileSystems = async (): Promise<FileSystemDescription[]> =>
    ((await efsClient().send(new DescribeFileSystemsCommand({}))).FileSystems ?? []).filter(
      (f) => f.LifeCycleState !== 'deleted',
    );
  const activeRevisions = async () =>
    ((await batchClient().send(new DescribeJobDefinitionsCommand({ status: 'ACTIVE' }))).jobDefinitions ?? [])
      .map((jd) => jd.jobDefinitionName)
      .filter((n) => n?.startsWith('mf-f1-'));
  const tag = (fs: FileSystemDescription, key: string) => fs.Tags?.find((t) => t.Key === key)?.Value;

  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  afterAll(() => proxy.stop());
  beforeEach(async () => {
    proxy.clear();
    fleet = await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
  });

  it("deletes a succeeded run's file system and deregisters its revision; a second delivery finds both done", async () => {
    const run = await submit();
    const event = jobStateChange(await describeJob(run.jobId));
    expect(event.detail.status).toBe('SUCCEEDED'); // the emulator ends jobs at once (use_docker: false)

    const first = await tearDownBatchRun(clients(), settings(), event);
    const again = await tearDownBatchRun(clients(), settings(), event);

    expect(first).toMatchObject({
      status: 'torn-down',
      jobId: run.jobId,
      runId: run.scratch!.runId,
      fileSystem: 'deleted',
      fileSystemId: run.scratch!.fileSystemId,
      revision: 'deregistered',
    });
    expect(first).not.toHaveProperty('retry.status', 'submitted');
    expect(again).toMatchObject({
      status: 'torn-down',
      fileSystem: 'not-found',
      revision: 'already-inactive',
    });
    expect(await liveFileSystems()).toEqual([]);
    expect(await activeRevisions()).toEqual([]);
  });

  it('ignores jobs that are not runs of the fleet, still running, or in another queue; touches nothing', async () => {
    const run = await submit();
    const plain = await submitBatchJob(clients(), settings(), {
      queue: fleet.queue,
      jobDefinition: fleet.jobDefinition,
      command: ['true'],
      scratch: false,
      attempts: 1,
    });
    const job = await describeJob(run.jobId);

    const outcomes = await Promise.all([
      tearDownBatchRun(clients(), settings(), jobStateChange(await describeJob(plain.jobId))),
      tearDownBatchRun(clients(), settings(), jobStateChange(job, { status: 'RUNNING' })),
      tearDownBatchRun(
        clients(),
        settings(),
        jobStateChange(job, { jobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/other' }),
      ),
      tearDownBatchRun(clients(), { ...settings(), fleetId: 'f2' }, jobStateChange(job)),
      tearDownBatchRun(clients(), settings(), {
        source: 'aws.ec2',
        'detail-type': 'EC2 Instance State-change Notification',
      }),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual(['ignored', 'ignored', 'ignored', 'ignored', 'ignored']);
    expect(outcomes.map((o) => (o as { reason: string }).reason)).toEqual([
      expect.stringMatching(/runs .*job-definition\/f1-job:1, no scratch run of fleet f1$/),
      `job ${run.jobId} is RUNNING, not ended`,
      expect.stringMatching(/job-queue\/other, not a queue of fleet f1$/),
      expect.stringMatching(/no scratch run of fleet f2$/),
      'not a Batch Job State Change event (source aws.ec2)',
    ]);
    expect(await liveFileSystems()).toHaveLength(1);
    expect(await activeRevisions()).toHaveLength(1);
  });

  it('a Spot reclaim with attempts left: a new run (new file system, new revision), first job kept; redelivery makes no second', async () => {
    const run = await submit(2);
    const event = jobStateChange(await describeJob(run.jobId), SPOT_RECLAIM);

    const first = await tearDownBatchRun(clients(), settings(), event);
    const again = await tearDownBatchRun(clients(), settings(), event);

    expect(first).toMatchObject({
      status: 'torn-down',
      fileSystem: 'deleted',
      retry: { status: 'submitted' },
    });
    const retry = (first as { retry: { run: { jobId: string; runId: string; fileSystemId: string } } }).retry
      .run;
    expect(retry.runId).not.toBe(run.scratch!.runId);
    expect(retry.fileSystemId).not.toBe(run.scratch!.fileSystemId);
    expect(again).toMatchObject({
      fileSystem: 'not-found',
      revision: 'already-inactive',
      retry: { status: 'already-made', runId: retry.runId, fileSystemId: retry.fileSystemId },
    });
    const [fs] = await liveFileSystems();
    expect(fs.FileSystemId).toBe(retry.fileSystemId);
    expect(tag(fs, TAG_BATCH_ATTEMPT)).toBe('2');
    expect(tag(fs, TAG_BATCH_FIRST_JOB)).toBe(run.jobId);
    expect(tag(fs, TAG_BATCH_JOB)).toBe(retry.jobId);
    expect(await activeRevisions()).toEqual([`mf-f1-${retry.runId}`]);
    const retried = await describeJob(retry.jobId);
    expect(retried).toMatchObject({
      jobName: 'train-7',
      container: expect.objectContaining({ command: ['./train.sh'] }),
    });

    // `batch status` of the first job follows the retry.
    const status = await batchJobStatus(
      { ...clients(), cloudwatch: cloudWatchClient({ maxAttempts: 1 }) },
      run.jobId,
    );
    expect(status).toMatchObject({
      jobId: run.jobId,
      fleet: 'f1',
      attempts: 2,
      attemptsAllowed: 2,
      state: 'SUCCEEDED',
    });
    expect(status.history).toEqual([
      expect.objectContaining({
        attempt: 1,
        jobId: run.jobId,
        fileSystemId: run.scratch!.fileSystemId,
        fileSystemExists: false,
        zone: fleet.net.subnets[0].availabilityZoneId,
      }),
      expect.objectContaining({
        attempt: 2,
        jobId: retry.jobId,
        fileSystemId: retry.fileSystemId,
        fileSystemExists: true,
      }),
    ]);
  });

  it('two deliveries of one Spot reclaim at the same instant: one retry job, one new file system', async () => {
    const run = await submit(3);
    const event = jobStateChange(await describeJob(run.jobId), SPOT_RECLAIM);
    // Both deliveries have looked for the retry's file system (none yet) before either create reaches the
    // emulator: the proxy holds each CreateFileSystem until both have arrived, then lets them race.
    let arrived = 0;
    let bothArrived!: () => void;
    const held = new Promise<void>((r) => (bothArrived = r));
    proxy.addRule({
      service: 'efs',
      operation: 'CreateFileSystem',
      match: () => {
        if (++arrived === 2) bothArrived();
        return true;
      },
      fault: { kind: 'hold', until: held },
      times: 2,
    });
    const viaProxy = () => ({
      ...clients(),
      efs: new EFSClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint }),
    });
    const lines: string[] = [];
    const outcomes = await Promise.all([
      tearDownBatchRun(viaProxy(), settings(), event, { log: (l) => lines.push(l) }),
      tearDownBatchRun(viaProxy(), settings(), event, { log: (l) => lines.push(l) }),
    ]);

    expect(arrived).toBe(2);
    const retries = outcomes.map((o) => (o as { retry: { status: string } }).retry);
    expect(retries.map((r) => r.status).sort()).toEqual(['already-made', 'submitted']);
    const submitted = retries.find((r) => r.status === 'submitted') as unknown as {
      run: { jobId: string; runId: string; fileSystemId: string };
    };
    expect(retries.find((r) => r.status === 'already-made')).toEqual({
      status: 'already-made',
      runId: submitted.run.runId,
      fileSystemId: submitted.run.fileSystemId,
    });
    expect(lines).toContainEqual(
      expect.stringMatching(/was made by another delivery of this event at the same time/),
    );
    const jobs =
      (await batchClient().send(new ListJobsCommand({ jobQueue: fleet.queue, jobStatus: 'SUCCEEDED' })))
        .jobSummaryList ?? [];
    expect(
      jobs
        .filter((j) => j.jobName === 'train-7')
        .map((j) => j.jobId)
        .sort(),
    ).toEqual([run.jobId, submitted.run.jobId].sort());
    expect((await liveFileSystems()).map((f) => f.FileSystemId)).toEqual([submitted.run.fileSystemId]);
    expect(await activeRevisions()).toEqual([`mf-f1-${submitted.run.runId}`]);
  });

  it('a redelivery after the retry ended (its file system gone) finds the retry job and makes no second', async () => {
    const run = await submit(3);
    const event = jobStateChange(await describeJob(run.jobId), SPOT_RECLAIM);
    const first = await tearDownBatchRun(clients(), settings(), event);
    const retry = (first as { retry: { run: { jobId: string; runId: string } } }).retry.run;
    // The retry succeeds and is torn down: no file system is left under its CreationToken.
    await tearDownBatchRun(clients(), settings(), jobStateChange(await describeJob(retry.jobId)));
    expect(await liveFileSystems()).toEqual([]);

    const late = await tearDownBatchRun(clients(), settings(), event);

    expect(late).toMatchObject({
      retry: { status: 'already-submitted', runId: retry.runId, jobId: retry.jobId },
    });
    expect(await liveFileSystems()).toEqual([]);
    expect(await activeRevisions()).toEqual([]);
    const jobs =
      (await batchClient().send(new ListJobsCommand({ jobQueue: fleet.queue, jobStatus: 'SUCCEEDED' })))
        .jobSummaryList ?? [];
    expect(jobs.filter((j) => j.jobName === 'train-7')).toHaveLength(2);
  });

  it('is not retried: the last attempt, a cancelled or terminated job, a success', async () => {
    const last = await submit(1);
    const cancelled = await submit(3);
    const exited = await submit(2);

    const outcomes = await Promise.all([
      tearDownBatchRun(clients(), settings(), jobStateChange(await describeJob(last.jobId), SPOT_RECLAIM)),
      tearDownBatchRun(
        clients(),
        settings(),
        jobStateChange(await describeJob(cancelled.jobId), {
          status: 'FAILED',
          statusReason: 'cancelled by the user',
        }),
      ),
    ]);
    expect(outcomes.map((o) => (o as { retry?: { status: string; reason: string } }).retry)).toEqual([
      { status: 'not-retried', reason: expect.stringMatching(/host lost .*attempt 1 of 1 was the last$/) },
      { status: 'not-retried', reason: 'failed for a reason Batch does not retry: cancelled by the user' },
    ]);
    // A non-zero exit is retried, as Batch would.
    const exit = await tearDownBatchRun(
      clients(),
      settings(),
      jobStateChange(await describeJob(exited.jobId), {
        status: 'FAILED',
        statusReason: 'Essential container in task exited',
        attempts: [{ container: { exitCode: 3 } }],
      }),
    );
    expect(exit).toMatchObject({ retry: { status: 'submitted', run: { attempt: 2 } } });
    expect(await liveFileSystems()).toHaveLength(1);
  });

  it("a container that could not start because its EFS volume did not mount is retried as a new run, with the fleet's key", async () => {
    const key = 'arn:aws:kms:us-east-1:123456789012:key/0d6c1f3e-0000-4000-8000-000000000002';
    const run = await submit(2);
    const volumeFailure = {
      status: 'FAILED' as const,
      statusReason: 'Task failed to start',
      attempts: [
        {
          statusReason: 'Task failed to start',
          container: {
            reason:
              'CannotStartContainerError: Error response from daemon: failed to mount volume mountfleet-scratch: mount.nfs4: Connection timed out',
          },
        },
      ],
    };
    // A start failure that is not about a volume (the image's command) is not.
    const badCommand = {
      ...volumeFailure,
      attempts: [
        { container: { reason: 'CannotStartContainerError: exec: "./train.sh": permission denied' } },
      ],
    };
    const notRetried = await submit(2);

    const outcome = await tearDownBatchRun(
      clients(),
      { ...settings(), kmsKeyId: key },
      jobStateChange(await describeJob(run.jobId), volumeFailure),
    );
    const other = await tearDownBatchRun(
      clients(),
      settings(),
      jobStateChange(await describeJob(notRetried.jobId), badCommand),
    );

    expect(outcome).toMatchObject({
      fileSystem: 'deleted',
      retry: { status: 'submitted', run: { attempt: 2 } },
    });
    expect(other).toMatchObject({ retry: { status: 'not-retried' } });
    const retry = (outcome as { retry: { run: { fileSystemId: string } } }).retry.run;
    const [fs] = await liveFileSystems();
    expect(fs).toMatchObject({ FileSystemId: retry.fileSystemId, KmsKeyId: key });
  });

  it('a retry is not made from a revision that no longer passes the host checks (the fleet changed its paths)', async () => {
    const run = await submit(2);
    const outcome = await tearDownBatchRun(
      clients(),
      { ...settings(), mountPaths: ['/mnt/other'] },
      jobStateChange(await describeJob(run.jobId), SPOT_RECLAIM),
    );
    expect(outcome).toMatchObject({
      fileSystem: 'deleted',
      retry: {
        status: 'not-retried',
        reason: expect.stringMatching(
          /^host lost .*, but its job definition no longer passes the fleet's host checks: containerProperties\.volumes\[0\]\.host\.sourcePath \/mnt\/data: not one of the fleet's Mountpoint paths \(\/mnt\/other\)/,
        ),
      },
    });
    expect(await liveFileSystems()).toEqual([]);
  });

  it('status of a job Batch does not know is a usage error', async () => {
    await expect(
      batchJobStatus(
        { ...clients(), cloudwatch: cloudWatchClient({ maxAttempts: 1 }) },
        '00000000-0000-0000-0000-000000000000',
      ),
    ).rejects.toThrow(/job 00000000-0000-0000-0000-000000000000: Batch knows no such job/);
  });
});
