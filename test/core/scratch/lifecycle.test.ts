/** runScratchJob in-process against the emulator: the paths the CLI tests cannot reach cheaply. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { DescribeFileSystemsCommand, DescribeMountTargetsCommand, EFSClient } from '@aws-sdk/client-efs';
import {
  clientConfig,
  cloudWatchClient,
  ec2Client,
  efsClient,
  type ClientOptions,
} from '../../../core/aws/clients';
import { runScratchJob, type ScratchJobRequest } from '../../../core/scratch/lifecycle';
import { deleteScratchFileSystem, RunAliveError } from '../../../core/scratch/inventory';
import { isMounted } from '../../../core/scratch/mount';
import { creationToken } from '../../../core/contract/creation-token';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE, TAG_RUN } from '../../../core/contract/tags';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import { scratchRunRequest } from './run-request';
import { createNetwork, createScratchFileSystem, type TestNetwork } from '../../support/fixtures';

/** What `mountfleet scratch delete` uses, straight to the emulator. */
const operatorClients = () => ({
  efs: efsClient({ maxAttempts: 1 }),
  ec2: ec2Client({ maxAttempts: 1 }),
  cloudwatch: cloudWatchClient({ maxAttempts: 1 }),
});

describe('runScratchJob (emulator)', () => {
  const emu = useEmulator();
  let proxy: FaultProxy;
  let net: TestNetwork;
  let dir: string;
  let log: string[];

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  afterAll(() => proxy.stop());
  beforeEach(async () => {
    proxy.clear();
    proxy.resetStats();
    net = await createNetwork(ec2Client({ maxAttempts: 1 }), 2);
    dir = mkdtempSync(join(tmpdir(), 'mf-lifecycle-'));
    log = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const request = (overrides: Partial<ScratchJobRequest> = {}): ScratchJobRequest =>
    scratchRunRequest(
      new EFSClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint }),
      net,
      dir,
      log,
      overrides,
    );
  const fileSystems = async () =>
    (await efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({}))).FileSystems ?? [];
  const mountTargetsOf = async (fileSystemId: string) =>
    (
      await efsClient({ maxAttempts: 1 }).send(
        new DescribeMountTargetsCommand({ FileSystemId: fileSystemId }),
      )
    ).MountTargets ?? [];

  it('says so, fails, and leaves the file system tagged for the reaper when teardown cannot finish; the command it names deletes it', async () => {
    const refused = proxy.addRule({
      service: 'efs',
      operation: 'DeleteFileSystem',
      fault: { kind: '5xx', status: 503 },
    });
    const result = await runScratchJob(request({ teardownTimeoutMs: 1500 }));

    expect(result.job?.status).toBe(0);
    expect(result.exitStatus).toBe(1);
    expect(result.teardown).toMatchObject({
      status: 'incomplete',
      cause: 'not-deleted',
      fileSystemId: result.fileSystemId,
      teardownMarked: true,
    });
    expect(log.at(-1)).toMatch(
      new RegExp(
        `^TEARDOWN INCOMPLETE \\(could not delete\\): ${result.fileSystemId} still exists \\(ServiceUnavailable.*` +
          `It keeps its tags mountfleet:fleet=f1, mountfleet:owner-instance=i-0123456789abcdef0, mountfleet:job=j1, mountfleet:run=${result.runId} ` +
          `and mountfleet:teardown-started-at: the orphan reaper deletes it once that mark is older than its grace period .*` +
          `To delete it now, run \`mountfleet scratch delete ${result.fileSystemId} --fleet f1\`\\. A re-run`,
      ),
    );
    const [left] = await fileSystems();
    expect(left.FileSystemId).toBe(result.fileSystemId);
    expect(left.NumberOfMountTargets).toBe(0); // only the last step failed
    // What the message names works now, without --force, although this run's instance still runs.
    proxy.removeRule(refused);
    await expect(
      deleteScratchFileSystem(operatorClients(), 'f1', result.fileSystemId!),
    ).resolves.toMatchObject({ status: 'deleted', run: 'over' });
    expect(left.Tags).toEqual(
      expect.arrayContaining([
        { Key: TAG_FLEET, Value: 'f1' },
        { Key: TAG_JOB, Value: 'j1' },
      ]),
    );
  });

  it('stops before the job when the Spot notice comes during setup, and tears down', async () => {
    let reads = 0;
    const result = await runScratchJob(
      request({
        readTerminationNotice: async () => (
          ++reads,
          { source: 'spot', action: 'terminate', time: new Date(Date.now() + 120_000) }
        ),
        command: '/bin/sh',
        args: ['-c', 'echo must-not-run; exit 9'],
      }),
    );
    expect(reads).toBe(1);
    expect(result).toMatchObject({ stoppedBy: 'spot', exitStatus: 143, job: undefined });
    expect(result.teardown.status).toMatch(/deleted|nothing-created/);
    expect(await fileSystems()).toEqual([]);
  });

  it('tears down what it made when setup fails (the mount helper refuses), and exits 1', async () => {
    const result = await runScratchJob(request({ mountHelper: '/bin/false' }));
    expect(result.exitStatus).toBe(1);
    expect(result.setupError).toMatch(
      /^\/bin\/false fs-\w+:\/ .* -o tls,mounttargetip=10\.0\.0\.\d+,noresvport failed/,
    );
    expect(result.teardown).toEqual({
      status: 'deleted',
      fileSystemId: result.fileSystemId,
      mountTargetsDeleted: 1,
    });
    expect(await fileSystems()).toEqual([]);
  });

  it('finds the file system by its CreationToken when the create answer was lost', async () => {
    // CreateFileSystem is carried out but its answer never arrives; the run is stopped meanwhile.
    proxy.addRule({
      service: 'efs',
      operation: 'CreateFileSystem',
      fault: { kind: 'rewrite', rewrite: () => 'not json' },
    });
    const result = await runScratchJob(request());
    expect(result.setupError).toBeDefined();
    expect(result.teardown.status).toBe('deleted');
    expect(log).toContainEqual(expect.stringMatching(/^deleted fs-\w+$/));
    expect(await fileSystems()).toEqual([]);
  });

  describe('says "cannot reach AWS" (not "could not delete") when the endpoint goes away during teardown, within its bound', () => {
    /** A run whose EFS endpoint breaks (by `breakIt`) as soon as teardown starts. */
    const runBrokenAtTeardown = async (
      efsEndpoint: string,
      breakIt: () => Promise<void> | void,
      client: ClientOptions,
    ) => {
      const started = Date.now();
      const result = await runScratchJob(
        request({
          efs: new EFSClient({ ...clientConfig(client), endpoint: efsEndpoint }),
          unreachableTimeoutMs: 3000,
          log: (line) => {
            log.push(line);
            if (line.startsWith('[tearing-down]')) void breakIt();
          },
        }),
      );
      return { result, seconds: (Date.now() - started) / 1000 };
    };
    const expectReported = async (result: Awaited<ReturnType<typeof runScratchJob>>, seconds: number) => {
      expect(result).toMatchObject({
        exitStatus: 1,
        teardown: { status: 'incomplete', cause: 'unreachable' },
      });
      expect(seconds).toBeLessThan(15);
      const marked = result.teardown.status === 'incomplete' && result.teardown.teardownMarked;
      expect(log.at(-1)).toMatch(
        new RegExp(
          `^TEARDOWN INCOMPLETE \\(cannot reach AWS\\): ${result.fileSystemId} was not deleted \\(no answer from AWS for \\d+ s: .*` +
            `It keeps its tags mountfleet:fleet=f1, mountfleet:owner-instance=i-0123456789abcdef0, mountfleet:job=j1.*` +
            `To delete it now, once AWS is reachable, run \`mountfleet scratch delete ${result.fileSystemId} --fleet f1${marked ? '' : ' --force'}\`` +
            (marked
              ? '\\. A re-run'
              : ' \\(--force: the file system carries no teardown mark and this instance still runs'),
        ),
      );
      const [left] = await fileSystems();
      expect(left.FileSystemId).toBe(result.fileSystemId);
      expect(left.Tags).toEqual(
        expect.arrayContaining([
          { Key: TAG_FLEET, Value: 'f1' },
          { Key: TAG_OWNER_INSTANCE, Value: 'i-0123456789abcdef0' },
          { Key: TAG_JOB, Value: 'j1' },
        ]),
      );
      // Once AWS answers, what the message names is what works: without the mark, only --force deletes it.
      if (!marked) {
        await expect(
          deleteScratchFileSystem(operatorClients(), 'f1', result.fileSystemId!),
        ).rejects.toBeInstanceOf(RunAliveError);
      }
      await expect(
        deleteScratchFileSystem(operatorClients(), 'f1', result.fileSystemId!, { force: !marked }),
      ).resolves.toMatchObject({ status: 'deleted' });
    };

    it('a black hole (with SDK retries that alone would take minutes)', async () => {
      const { result, seconds } = await runBrokenAtTeardown(
        proxy.endpoint,
        () => {
          proxy.addRule({ service: 'efs', fault: { kind: 'blackhole' } });
        },
        { maxAttempts: 10, requestTimeoutMs: 10_000 },
      );
      await expectReported(result, seconds);
    });

    it('a closed port', async () => {
      const closing = await FaultProxy.start({ target: emu.endpoint });
      const { result, seconds } = await runBrokenAtTeardown(closing.endpoint, () => closing.stop(), {
        maxAttempts: 2,
      });
      await expectReported(result, seconds);
    });
  });

  it("looks a lost create up by the run's CreationToken, and leaves a file system with the token but not the run's tags", async () => {
    const runId = 'r20261126t000000-00000000000000aa';
    // The run's token, this instance as owner, but another fleet's tags: not this run's to delete.
    const foreign = await createScratchFileSystem(
      efsClient({ maxAttempts: 1 }),
      { fleet: 'f-other', job: 'j1', owner: 'i-0123456789abcdef0' },
      creationToken('f1', runId),
    );
    proxy.addRule({ service: 'efs', operation: 'CreateFileSystem', fault: { kind: '5xx', status: 500 } });
    const result = await runScratchJob(request({ runId }));
    expect(result.setupError).toMatch(/got no clear answer/);
    expect(result.teardown.status).toBe('nothing-created');
    expect(log).toContainEqual(
      `${foreign} holds this run's CreationToken but not its tags (${TAG_FLEET}=f-other, ${TAG_RUN}=(none)): left alone`,
    );
    expect((await fileSystems()).map((f) => f.FileSystemId)).toEqual([foreign]);
  });

  describe('leaves alone what it did not make', () => {
    it('a file system of the same job made by an earlier run (any owner, any zone): it makes and deletes its own', async () => {
      const ec2 = ec2Client({ maxAttempts: 1 });
      const launched = await ec2.send(
        new RunInstancesCommand({
          ImageId: 'ami-12c6146b',
          MinCount: 1,
          MaxCount: 1,
          SubnetId: net.subnets[0].subnetId,
        }),
      );
      const owner = launched.Instances![0].InstanceId!;
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [owner] }));
      // An orphan of job j1 in this zone (owner gone) and one in another zone, with today's job-keyed token.
      const orphans = [
        await createScratchFileSystem(
          efsClient({ maxAttempts: 1 }),
          { fleet: 'f1', job: 'j1', owner, mountTargetSubnet: net.subnets[0] },
          'mf/f1/j1',
        ),
        await createScratchFileSystem(
          efsClient({ maxAttempts: 1 }),
          { fleet: 'f1', job: 'j1', owner, mountTargetSubnet: net.subnets[1] },
          'mf/f1/j1-other-zone',
        ),
      ];
      const result = await runScratchJob(request());
      expect(result).toMatchObject({ exitStatus: 0, teardown: { status: 'deleted' } });
      expect(orphans).not.toContain(result.fileSystemId);
      expect((await fileSystems()).map((f) => f.FileSystemId).sort()).toEqual([...orphans].sort());
      for (const orphan of orphans) expect(await mountTargetsOf(orphan)).toHaveLength(1);
      expect(proxy.count('efs', 'TagResource')).toBe(1); // its own teardown mark only
    });

    it("the user's own mount at --path", async () => {
      const path = join(dir, 'busy');
      mkdirSync(path);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', path]);
      try {
        const result = await runScratchJob(request({ path }));
        expect(result.setupError).toBe(
          `${path} is already a mount point: unmount it (umount -l ${path}) or pass another --path`,
        );
        expect(result.teardown.status).toBe('deleted');
        expect(isMounted(path)).toBe(true);
      } finally {
        execFileSync('umount', [path]);
      }
    });

    it('no directory it created for a nested --path, and none that was there before', async () => {
      mkdirSync(join(dir, 'kept'));
      const result = await runScratchJob(request({ path: join(dir, 'kept', 'a', 'b', 'scratch') }));
      expect(result.exitStatus).toBe(0);
      expect(readdirSync(dir)).toEqual(['kept']);
      expect(readdirSync(join(dir, 'kept'))).toEqual([]);
    });
  });
});
