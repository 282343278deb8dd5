/** `batch submit` against the emulator: the checks, a scratch run made whole, and rolled back when a step fails. */
import {
  BatchClient,
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  type JobDefinition,
} from '@aws-sdk/client-batch';
import { DescribeFileSystemsCommand, DescribeMountTargetsCommand, EFSClient } from '@aws-sdk/client-efs';
import { batchClient, clientConfig, ec2Client, efsClient } from '../../../core/aws/clients';
import { answerSubmitRequest, submitBatchJob, type BatchFleetSettings } from '../../../core/batch';
import { ROLLBACK_RESERVE_MS } from '../../../core/batch/submit';
import type { BatchSubmitRequest } from '../../../core/contract';
import { EXIT_STATUS, UsageError } from '../../../core/common/errors';
import {
  TAG_BATCH_ATTEMPT,
  TAG_BATCH_ATTEMPTS,
  TAG_BATCH_FIRST_JOB,
  TAG_BATCH_JOB,
  TAG_BATCH_QUEUE,
} from '../../../core/contract/batch';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE, TAG_RUN } from '../../../core/contract/tags';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import {
  createBatchFleet,
  fleetSettings,
  createQueue,
  queueTags,
  registerJobDefinition,
  type BatchFleet,
} from './batch-fleet';

/** A Batch REST-JSON operation at the proxy (it recognises Batch's service, not its operations). */
const batchOp = (path: string) => (r: { path: string }) => r.path === `/v1/${path}`;

describe('batch submit (emulator)', () => {
  const emu = useEmulator();
  let proxy: FaultProxy;
  let fleet: BatchFleet & { computeEnvironment: string };
  const efs = () => efsClient({ maxAttempts: 1 });
  const clients = (batch: BatchClient = batchClient({ maxAttempts: 1 })) => ({
    batch,
    efs: efs(),
    ec2: ec2Client({ maxAttempts: 1 }),
  });
  const proxiedBatch = () =>
    new BatchClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint });
  /** The fleet as its functions know it (their environment); queues made by a test are added with `queues`. */
  let settings: BatchFleetSettings;
  const addQueue = async (name: string, tags: Record<string, string | undefined>) => {
    const arn = await createQueue(batchClient(), fleet.computeEnvironment, name, tags);
    settings = { ...settings, queueArns: [...settings.queueArns, arn] };
    return arn;
  };
  const submit = (c: ReturnType<typeof clients>, r: BatchSubmitRequest, o = {}) =>
    submitBatchJob(c, settings, r, o);
  const request = (over: Partial<BatchSubmitRequest> = {}): BatchSubmitRequest => ({
    queue: fleet.queue,
    jobDefinition: fleet.jobDefinition,
    command: ['./encode.sh', 'in.mov'],
    scratch: true,
    attempts: 2,
    jobName: 'encode-42',
    ...over,
  });
  const liveFileSystems = async () =>
    ((await efs().send(new DescribeFileSystemsCommand({}))).FileSystems ?? []).filter(
      (f) => f.LifeCycleState !== 'deleted',
    );
  const runRevisions = async (status?: string): Promise<JobDefinition[]> =>
    (
      (await batchClient().send(new DescribeJobDefinitionsCommand(status ? { status } : {})))
        .jobDefinitions ?? []
    ).filter((jd) => jd.jobDefinitionName?.startsWith('mf-f1-'));

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  afterAll(() => proxy.stop());
  beforeEach(async () => {
    proxy.clear();
    fleet = await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
    settings = fleetSettings(fleet);
  });

  it("makes the run's file system, mount target, revision and job, and tags them as the contract says", async () => {
    const result = await submit(clients(), request());

    expect(result).toMatchObject({ jobName: 'encode-42', queue: 'f1-az0', fleet: 'f1', attempts: 2 });
    const [fs] = await liveFileSystems();
    expect(fs.FileSystemId).toBe(result.scratch!.fileSystemId);
    expect(fs).toMatchObject({
      CreationToken: `mf/f1/${result.scratch!.runId}`,
      AvailabilityZoneName: fleet.net.subnets[0].availabilityZone,
      Encrypted: true,
    });
    const tags = Object.fromEntries((fs.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      [TAG_FLEET]: 'f1',
      [TAG_JOB]: 'encode-42',
      [TAG_RUN]: result.scratch!.runId,
      [TAG_BATCH_QUEUE]: 'f1-az0',
      [TAG_BATCH_JOB]: result.jobId,
      [TAG_BATCH_ATTEMPT]: '1',
      [TAG_BATCH_FIRST_JOB]: result.jobId,
    });
    expect(tags[TAG_OWNER_INSTANCE]).toBeUndefined();
    const mts = (await efs().send(new DescribeMountTargetsCommand({ FileSystemId: fs.FileSystemId })))
      .MountTargets!;
    expect(mts).toEqual([expect.objectContaining({ SubnetId: fleet.net.subnets[0].subnetId })]);

    const [revision] = await runRevisions('ACTIVE');
    expect(revision.jobDefinitionName).toBe(`mf-f1-${result.scratch!.runId}`);
    expect(result.jobDefinition).toBe(revision.jobDefinitionArn);
    expect(revision.containerProperties!.volumes).toContainEqual({
      name: 'mountfleet-scratch',
      efsVolumeConfiguration: {
        fileSystemId: fs.FileSystemId,
        transitEncryption: 'ENABLED',
        authorizationConfig: { iam: 'ENABLED' },
      },
    });
    expect(revision.containerProperties!.mountPoints).toContainEqual({
      sourceVolume: 'mountfleet-scratch',
      containerPath: '/scratch',
      readOnly: false,
    });
    expect(revision.tags).toMatchObject({ [TAG_RUN]: result.scratch!.runId, [TAG_BATCH_ATTEMPTS]: '2' });

    const job = (await batchClient().send(new DescribeJobsCommand({ jobs: [result.jobId] }))).jobs![0];
    expect(job.container!.command).toEqual(['./encode.sh', 'in.mov']);
    expect(job.tags).toMatchObject({
      [TAG_FLEET]: 'f1',
      [TAG_BATCH_ATTEMPT]: '1',
      [TAG_BATCH_ATTEMPTS]: '2',
    });
  });

  it('without --scratch submits the job definition itself with the command: no file system, no revision', async () => {
    const result = await submit(clients(), request({ scratch: false }));

    expect(result.scratch).toBeUndefined();
    expect(result.jobDefinition).toMatch(/job-definition\/f1-job:1$/);
    expect(await liveFileSystems()).toEqual([]);
    expect(await runRevisions()).toEqual([]);
  });

  it('a plain submit of a job definition that passes the host checks needs no fleet tag: the checks decide', async () => {
    await registerJobDefinition(batchClient(), 'untagged', { roleArn: fleet.roleArn, fleetTag: null });

    const result = await submit(clients(), request({ jobDefinition: 'untagged', scratch: false }));

    expect(result.jobDefinition).toMatch(/job-definition\/untagged:1$/);
  });

  it("refuses a queue of the fleet's tag that is not one of the fleet's queues, naming --queue", async () => {
    await createQueue(batchClient(), fleet.computeEnvironment, 'lookalike', queueTags(fleet.net, 0));
    const err = await submit(clients(), request({ queue: 'lookalike' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(
      `--queue lookalike: not a job queue of fleet f1 (it is f1's): pass one of ${fleet.queueArn}`,
    );
    expect(await liveFileSystems()).toEqual([]);
  });

  it("encrypts the run's file system with the fleet's scratch key when it has one", async () => {
    const key = 'arn:aws:kms:us-east-1:123456789012:key/0d6c1f3e-0000-4000-8000-000000000001';
    settings = { ...settings, kmsKeyId: key };

    const result = await submit(clients(), request());

    const [fs] = await liveFileSystems();
    expect(fs).toMatchObject({ FileSystemId: result.scratch!.fileSystemId, Encrypted: true, KmsKeyId: key });
  });

  it('stops in time to roll back before the function must end: nothing left, exit status 130', async () => {
    // The function's time is all but gone (less than the rollback's reserve): the submit stops at once.
    const err = await answerSubmitRequest(clients(), settings, request(), {
      remainingMs: ROLLBACK_RESERVE_MS,
    }).catch((e: unknown) => e);
    expect((err as { exitStatus: number }).exitStatus).toBe(EXIT_STATUS.interrupted);
    expect((err as Error).message).toMatch(
      /ran out of time before it made anything .*; nothing was created$/,
    );
    expect(await liveFileSystems()).toEqual([]);
  });

  it('answers a request that is not one as refused, naming the field (nothing created)', async () => {
    const answer = await answerSubmitRequest(
      clients(),
      settings,
      { ...request(), attempts: 11, jobName: 'no spaces', extra: true },
      { remainingMs: 900_000 },
    );
    expect(answer).toEqual({
      status: 'refused',
      message: expect.stringMatching(
        /^invalid batch submit request:\n.*attempts: .*\n.*jobName: 1-128 letters.*\n.*\(root\): Unrecognized key: "extra"/s,
      ),
    });
    expect(await liveFileSystems()).toEqual([]);
  });

  it('refuses an unknown queue, naming --queue and the fix; nothing is created', async () => {
    const err = await submit(clients(), request({ queue: 'nope' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^--queue nope: no such job queue .*describe-job-queues/);
    expect(await liveFileSystems()).toEqual([]);
  });

  it("refuses a queue without the fleet's tags", async () => {
    await addQueue('plain', {});
    await expect(submit(clients(), request({ queue: 'plain' }))).rejects.toThrow(
      /--queue plain: the job queue carries no mountfleet:fleet, mountfleet:az-id, mountfleet:mount-paths tag/,
    );
  });

  it('refuses --scratch on a queue without a scratch subnet, or whose subnet is in another zone', async () => {
    const tags = queueTags(fleet.net, 0);
    await addQueue('no-scratch', {
      ...tags,
      'mountfleet:scratch-subnet': undefined,
    });
    await addQueue('other-zone', {
      ...tags,
      'mountfleet:scratch-subnet': fleet.net.subnets[1].subnetId,
    });

    await expect(submit(clients(), request({ queue: 'no-scratch' }))).rejects.toThrow(
      new UsageError(
        '--scratch on --queue no-scratch: the queue names no scratch subnet and security group (tags mountfleet:scratch-subnet, ' +
          'mountfleet:scratch-security-group): submit without --scratch, or to a queue of a fleet deployed with scratch',
      ),
    );
    await expect(submit(clients(), request({ queue: 'other-zone' }))).rejects.toThrow(
      new RegExp(
        `--scratch on --queue other-zone: its scratch subnet ${fleet.net.subnets[1].subnetId} is in zone ` +
          `${fleet.net.subnets[1].availabilityZoneId}, not the queue's ${fleet.net.subnets[0].availabilityZoneId}`,
      ),
    );
    // Without --scratch the same queue is fine.
    await expect(submit(clients(), request({ queue: 'no-scratch', scratch: false }))).resolves.toBeDefined();
    expect(await liveFileSystems()).toEqual([]);
  });

  it("refuses a job definition without the fleet's mounts (missing, or not read-only), and an unknown one", async () => {
    await registerJobDefinition(batchClient(), 'half', { roleArn: fleet.roleArn, mounts: ['/mnt/data'] });
    await registerJobDefinition(batchClient(), 'writable', { roleArn: fleet.roleArn, readOnly: false });

    await expect(submit(clients(), request({ jobDefinition: 'half' }))).rejects.toThrow(
      /^--job-definition half: binds not all of the fleet's Mountpoint paths read-only \(missing: \/mnt\/models\): a job definition without the fleet's mounts/,
    );
    await expect(submit(clients(), request({ jobDefinition: 'writable', scratch: false }))).rejects.toThrow(
      /^--job-definition writable: refused, .*\n {2}containerProperties\.mountPoints\[0\] \(mount0 at \/mnt\/data\): must be readOnly/,
    );
    await expect(submit(clients(), request({ jobDefinition: 'gone' }))).rejects.toThrow(
      /^--job-definition gone: no ACTIVE job definition/,
    );
    expect(await liveFileSystems()).toEqual([]);
  });

  describe('a job definition that asks more of the host than a job may have is refused, and nothing is made', () => {
    /** The fleet's job definition with `change` applied to its container properties. */
    const hostile = async (name: string, change: (c: Record<string, unknown>) => void) => {
      const base = (
        await batchClient().send(
          new DescribeJobDefinitionsCommand({ jobDefinitionName: 'f1-job', status: 'ACTIVE' }),
        )
      ).jobDefinitions![0];
      const container = JSON.parse(JSON.stringify(base.containerProperties)) as Record<string, unknown>;
      change(container);
      await batchClient().send(
        new RegisterJobDefinitionCommand({
          jobDefinitionName: name,
          type: 'container',
          containerProperties: container,
        }),
      );
    };
    const addVolume = (c: Record<string, unknown>, sourcePath: string, readOnly: boolean) => {
      (c.volumes as unknown[]).push({ name: 'extra', host: { sourcePath } });
      (c.mountPoints as unknown[]).push({ sourceVolume: 'extra', containerPath: '/host', readOnly });
    };

    it.each([
      [
        'docker-socket',
        (c: Record<string, unknown>) => addVolume(c, '/var/run/docker.sock', false),
        /volumes\[2\]\.host\.sourcePath \/var\/run\/docker\.sock: not one of the fleet's Mountpoint paths \(\/mnt\/data, \/mnt\/models\)/,
      ],
      [
        'host-root-read-only',
        (c: Record<string, unknown>) => addVolume(c, '/', true),
        /volumes\[2\]\.host\.sourcePath \/: not one of the fleet's Mountpoint paths/,
      ],
      [
        'fleet-path-writable',
        (c: Record<string, unknown>) => addVolume(c, '/mnt/data', false),
        /mountPoints\[2\] \(extra at \/host\): must be readOnly/,
      ],
      [
        'privileged',
        (c: Record<string, unknown>) => (c.privileged = true),
        /containerProperties\.privileged: a privileged container owns the host/,
      ],
      [
        'device',
        (c: Record<string, unknown>) => (c.linuxParameters = { devices: [{ hostPath: '/dev/nvme0n1' }] }),
        /linuxParameters\.devices \(\/dev\/nvme0n1\): a host device gives the job the host/,
      ],
      [
        'other-role',
        (c: Record<string, unknown>) => (c.jobRoleArn = 'arn:aws:iam::123456789012:role/admin'),
        /containerProperties\.jobRoleArn arn:aws:iam::123456789012:role\/admin: jobs of this fleet run as its job role/,
      ],
      [
        'efs-volume',
        (c: Record<string, unknown>) => {
          (c.volumes as unknown[]).push({
            name: 'other',
            efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0' },
          });
        },
        /volumes\[2\] \(other\): an EFS volume; a job's scratch is made by the fleet per run/,
      ],
    ])('%s', async (name, change, problem) => {
      await hostile(name, change);
      for (const scratch of [true, false]) {
        const err = await submit(clients(), request({ jobDefinition: name, scratch })).catch(
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(UsageError);
        expect((err as Error).message).toMatch(new RegExp(`^--job-definition ${name}: refused, `));
        expect((err as Error).message).toMatch(problem);
      }
      expect(await liveFileSystems()).toEqual([]);
      expect(await runRevisions()).toEqual([]);
      const jobs = await batchClient().send(
        new ListJobsCommand({ jobQueue: fleet.queue, jobStatus: 'SUCCEEDED' }),
      );
      expect(jobs.jobSummaryList ?? []).toEqual([]);
    });
  });

  it('refuses --scratch with a job definition without a job role (EFS IAM authorization mounts with it)', async () => {
    await registerJobDefinition(batchClient(), 'no-role');
    await expect(submit(clients(), request({ jobDefinition: 'no-role' }))).rejects.toThrow(
      /--job-definition no-role: has no jobRoleArn/,
    );
  });

  it('a registration that fails after the file system was made: rolled back, nothing leaked, the step named', async () => {
    proxy.addRule({
      service: 'batch',
      match: batchOp('registerjobdefinition'),
      fault: { kind: '5xx', status: 500 },
    });

    const err = await submit(clients(proxiedBatch()), request()).catch((e: unknown) => e);

    expect((err as Error).name).toBe('BatchSubmitError');
    expect((err as { exitStatus: number }).exitStatus).toBe(EXIT_STATUS.failure);
    expect((err as Error).message).toMatch(
      /^run r\d{8}t\d{6}-[0-9a-f]{16}: could not register the job definition: InternalError.*; rolled back: deleted file system fs-[0-9a-f]+; nothing left$/,
    );
    expect(await liveFileSystems()).toEqual([]);
    expect(await runRevisions('ACTIVE')).toEqual([]);
  });

  it('a SubmitJob that fails: the revision deregistered and the file system deleted', async () => {
    proxy.addRule({ service: 'batch', match: batchOp('submitjob'), fault: { kind: '5xx', status: 503 } });

    await expect(submit(clients(proxiedBatch()), request())).rejects.toThrow(
      /could not submit the job: ServiceUnavailable.*; rolled back: deregistered arn:aws:batch:.*:job-definition\/mf-f1-r.*:1, deleted file system fs-/,
    );
    expect(await liveFileSystems()).toEqual([]);
    expect(await runRevisions('ACTIVE')).toEqual([]);
    expect(await runRevisions('INACTIVE')).toHaveLength(1);
  });

  it('a stop asked for while the mount target is made: rolled back, exit status 130', async () => {
    const stop = new AbortController();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    proxy.addRule({
      service: 'efs',
      operation: 'CreateMountTarget',
      match: () => (stop.abort('SIGTERM'), true),
      fault: { kind: 'hold', until: held },
      times: 1,
    });
    const proxiedEfs = new EFSClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint });
    const submitting = submit({ ...clients(), efs: proxiedEfs }, request(), {
      signal: stop.signal,
    }).catch((e: unknown) => e);
    // The create arrives at the proxy (and the stop is asked for); then its answer is let through.
    await new Promise<void>((r) => stop.signal.addEventListener('abort', () => r(), { once: true }));
    release();
    const err = (await submitting) as Error & { exitStatus: number };
    expect(err.exitStatus).toBe(EXIT_STATUS.interrupted);
    expect(err.message).toMatch(
      /stopped \(SIGTERM\) at "wait for the mount target"; rolled back: deleted file system fs-[0-9a-f]+; nothing left$/,
    );
    expect(await liveFileSystems()).toEqual([]);
  });

  it('two submits at once share nothing: a run, a file system and a revision each', async () => {
    const [a, b] = await Promise.all([submit(clients(), request()), submit(clients(), request())]);

    expect(a.scratch!.runId).not.toBe(b.scratch!.runId);
    expect(a.scratch!.fileSystemId).not.toBe(b.scratch!.fileSystemId);
    expect(a.jobDefinition).not.toBe(b.jobDefinition);
    expect(a.jobId).not.toBe(b.jobId);
    expect(await liveFileSystems()).toHaveLength(2);
  });
});
