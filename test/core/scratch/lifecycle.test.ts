/** runScratchJob in-process against the emulator: the paths the CLI tests cannot reach cheaply. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeFileSystemsCommand, EFSClient } from '@aws-sdk/client-efs';
import { clientConfig, ec2Client, efsClient } from '../../../core/aws';
import { runScratchJob, type ScratchRunRequest } from '../../../core/scratch/lifecycle';
import { TAG_FLEET, TAG_JOB } from '../../../core/tags';
import { MOUNT_HELPER_STANDIN } from '../../agent/scratch/harness';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import { createNetwork, type TestNetwork } from '../../support/fixtures';

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
    net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    dir = mkdtempSync(join(tmpdir(), 'mf-lifecycle-'));
    log = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const request = (overrides: Partial<ScratchRunRequest> = {}): ScratchRunRequest => ({
    efs: new EFSClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint }),
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
  });
  const fileSystems = async () =>
    (await efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({}))).FileSystems ?? [];

  it('says so, fails, and leaves the file system tagged for the reaper when teardown cannot finish', async () => {
    proxy.addRule({ service: 'efs', operation: 'DeleteFileSystem', fault: { kind: '5xx', status: 503 } });
    const result = await runScratchJob(request({ teardownTimeoutMs: 1500 }));

    expect(result.job?.status).toBe(0);
    expect(result.exitStatus).toBe(1);
    expect(result.teardown).toMatchObject({ status: 'incomplete', fileSystemId: result.fileSystemId });
    expect(log.at(-1)).toMatch(
      new RegExp(
        `^TEARDOWN INCOMPLETE: ${result.fileSystemId} still exists .*It stays tagged mountfleet:fleet=f1, mountfleet:job=j1: the orphan reaper will delete it`,
      ),
    );
    const [left] = await fileSystems();
    expect(left.FileSystemId).toBe(result.fileSystemId);
    expect(left.NumberOfMountTargets).toBe(0); // only the last step failed
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
});
