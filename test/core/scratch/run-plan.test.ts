/** planScratchRun in-process: flags and agent.json settled into one plan, and nothing left held when it fails. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planScratchRun, type ScratchRunIo, type ScratchRunRequest } from '../../../core/scratch/run-plan';
import { ImdsStandIn } from '../../support/imds';
import { MOUNT_HELPER_STANDIN } from '../../support/standins';

describe('planScratchRun', () => {
  let imds: ImdsStandIn;
  let dir: string;
  let log: string[];
  let opened: string[];
  let discarded: number;
  let disposed: number;
  const saved = { ...process.env };

  beforeAll(async () => {
    imds = await ImdsStandIn.start({ availabilityZone: 'us-east-1b', availabilityZoneId: 'use1-az6' });
  });
  afterAll(() => imds.stop());

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'mf-plan-')));
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = imds.endpoint;
    process.env.MOUNTFLEET_RUN_DIR = join(dir, 'run');
    process.env.MOUNTFLEET_SYSTEM_ROOT = join(dir, 'root');
    delete process.env.MOUNTFLEET_CONFIG;
    [log, opened, discarded, disposed] = [[], [], 0, 0];
  });
  afterEach(() => {
    process.env = { ...saved };
    rmSync(dir, { recursive: true, force: true });
  });

  const io: ScratchRunIo = {
    log: (line) => log.push(line),
    openSummary: (path) => {
      opened.push(path);
      return { write: () => undefined, discard: () => void discarded++ };
    },
    stopOnSignals: () => ({ signal: new AbortController().signal, dispose: () => void disposed++ }),
    printSummary: () => undefined,
  };

  const request = (overrides: Partial<ScratchRunRequest> = {}): ScratchRunRequest => ({
    command: ['sh', '-c', 'true'],
    jobId: 'j1',
    jobIdGenerated: false,
    spotPollMs: 5000,
    strict: false,
    creditCheckSeconds: 60,
    onCreditLow: 'warn',
    mountHelper: MOUNT_HELPER_STANDIN,
    ...overrides,
  });

  const agentJson = () => {
    const file = join(dir, 'agent.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        fleetId: 'gpu',
        region: 'us-east-1',
        scratch: {
          securityGroupId: 'sg-0aaa',
          subnets: { 'use1-az4': 'subnet-0a4', 'use1-az6': 'subnet-0a6' },
          path: join(dir, 'link', 'scratch'),
          kmsKeyId: 'alias/scratch',
        },
      }),
    );
    return file;
  };

  it("settles flags, agent.json, this zone's subnet and the resolved path into one plan", async () => {
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const plan = await planScratchRun(
      request({ configPath: agentJson(), securityGroup: 'sg-0fff', summaryPath: join(dir, 's.json') }),
      io,
    );
    try {
      expect(plan).toMatchObject({
        fleetId: 'gpu',
        jobId: 'j1',
        command: 'sh',
        args: ['-c', 'true'],
        region: 'us-east-1',
        placement: {
          instanceId: 'i-0123456789abcdef0',
          availabilityZone: 'us-east-1b',
          availabilityZoneId: 'use1-az6',
        },
        path: join(dir, 'real', 'scratch'),
        createdDirectory: join(dir, 'real', 'scratch'),
        subnetId: 'subnet-0a6',
        securityGroupId: 'sg-0fff',
        kmsKeyId: 'alias/scratch',
        teardownGraceSeconds: 20,
        terminationPollMs: 5000,
        creditGuard: {
          intervalSeconds: 60,
          onCreditLow: 'warn',
          elasticPrices: { region: 'us-east-1' },
          metricsLogFile: join(dir, 'root', 'var/log/mountfleet/metrics.log'),
        },
        runDir: join(dir, 'run'),
      });
      expect(plan.checkedPath.path).toBe(plan.path);
      expect(plan.locks.fds).toHaveLength(2);
      expect(opened).toEqual([join(dir, 's.json')]);
      expect(log).toEqual([
        `--path ${join(dir, 'link', 'scratch')} resolves through a symlink to ${join(dir, 'real', 'scratch')}: mounting there`,
      ]);
    } finally {
      plan.release();
    }
    expect([discarded, disposed]).toEqual([1, 1]);
  });

  it('says a generated job id once the plan is settled', async () => {
    const plan = await planScratchRun(
      request({
        jobIdGenerated: true,
        fleet: 'adhoc',
        subnet: 'subnet-0ff',
        securityGroup: 'sg-0ff',
        path: join(dir, 'scratch'),
      }),
      io,
    );
    plan.release();
    expect(log).toEqual(['job id j1']);
  });

  it('lets go of everything it took when a later check fails', async () => {
    const settles = request({ configPath: agentJson(), path: join(dir, 'scratch'), summaryPath: 'x.json' });
    // No subnet for this zone: found only after IMDS, once the locks and the directory are held.
    const noSubnet = { ...settles, configPath: undefined, fleet: 'gpu', securityGroup: 'sg-0aaa' };
    await expect(planScratchRun(noSubnet, io)).rejects.toMatchObject({
      message:
        "no scratch subnet for this instance's zone use1-az6: pass --subnet SUBNET_ID (agent.json has no scratch section)",
      exitStatus: 2,
    });
    expect([opened.length, discarded, disposed]).toEqual([1, 1, 1]);
    // The job id and the path are free again.
    const plan = await planScratchRun(settles, io);
    plan.release();
  });

  it('checks agent.json and the fleet before it opens --summary, and refuses --strict before both', async () => {
    await expect(planScratchRun(request({ summaryPath: join(dir, 's.json') }), io)).rejects.toThrow(
      /^no fleet: pass --fleet ID/,
    );
    await expect(
      planScratchRun(
        request({ expectedIoBytes: 3 * 1024 ** 4, strict: true, configPath: '/nonexistent' }),
        io,
      ),
    ).rejects.toThrow(/^refusing \(--strict\): expected I\/O 3\.00 TiB exceeds/);
    expect([opened, disposed]).toEqual([[], 0]);
    expect(existsSync(join(dir, 's.json'))).toBe(false);
  });
});
