import { ec2Client } from '../../../core/aws/clients';
import { parseAgentConfig } from '../../../core/contract/agent-config';
import { compareVersions, FLAG_FIRST_VERSION } from '../../../core/tuner/command-line';
import { INSTANCE_TYPE_ROWS } from '../../../core/tuner/instance-type-table';
import { UnknownInstanceTypeError } from '../../../core/instance/instance-type-lookup';
import { FALLBACK_INSTANCE_TYPES } from '../../../core/tuner/instance-facts';
import { formatTuneReport, tuneForInstanceType, type TuneReport } from '../../../core/instance/tune-report';
import { planMounts, tuneMounts } from '../../../core/tuner/plan-mounts';
import {
  MAX_DATA_BUFFERS_MIB,
  memoryTargetFor,
  MIN_MEMORY_TARGET_MIB,
} from '../../../core/tuner/host-profile';
import { useEmulator } from '../../support/emulator';
import { parseArgs } from '../../support/mount-s3-standin/cli-spec';
import { mixedMountsConfig } from '../../support/fixtures';

useEmulator();

const interfaces = (n: number) => Array.from({ length: n }, (_, i) => `ens${5 + i}`);
const flagValue = (args: readonly string[], flag: string) => args[args.indexOf(flag) + 1];

/** Every process's command line, checked against Mountpoint 1.24.0's own command line definition. */
function expectValidFor1240(report: TuneReport) {
  for (const m of report.plan.mounts) {
    for (const p of m.processes) {
      expect(() => parseArgs(p.args)).not.toThrow();
      for (const flag of p.args.filter((a) => a.startsWith('--'))) {
        const since = FLAG_FIRST_VERSION[flag as keyof typeof FLAG_FIRST_VERSION];
        expect(since).toBeDefined();
        expect(compareVersions(since, '1.24.0')).toBeLessThanOrEqual(0);
      }
    }
    for (const d of [...report.plan.host, ...m.decisions]) {
      expect(d.reason.length).toBeGreaterThan(10);
      expect(d.fact).toMatch(/reference|agent\.json|DescribeInstanceTypes|built-in table|\/sys\/block/);
    }
  }
}

describe('tune for eight-plus instance types (built-in table)', () => {
  const cases: [string, number | undefined, Record<string, unknown>][] = [
    ['t3.large', undefined, { gbps: '1', cache: '/var/cache/mountfleet/mnt-data/xz', bind: 0 }],
    ['c6i.4xlarge', undefined, { gbps: '12', cache: '/var/cache/mountfleet/mnt-data/xz', bind: 0 }],
    ['m7g.2xlarge', undefined, { gbps: '15', cache: '/var/cache/mountfleet/mnt-data/xz', bind: 0 }],
    ['g5.xlarge', undefined, { gbps: '10', cache: '/mnt/mountfleet-cache/mnt-data/xz', bind: 0 }],
    ['g5.12xlarge', undefined, { gbps: '40', cache: '/mnt/mountfleet-cache/mnt-data/xz', bind: 0 }],
    ['i4i.8xlarge', undefined, { gbps: '18', cache: '/mnt/mountfleet-cache/mnt-data/xz', bind: 0 }],
    ['m5d.8xlarge', undefined, { gbps: '10', cache: '/mnt/mountfleet-cache/mnt-data/xz', bind: 0 }],
    ['p4d.24xlarge', 4, { gbps: '400', cache: '/mnt/mountfleet-cache/mnt-data/xz', bind: 4 }],
    ['p5.48xlarge', 32, { gbps: '3200', cache: '/mnt/mountfleet-cache/mnt-data/xz', bind: 32 }],
  ];
  test.each(cases)('%s', async (instanceType, nics, expected) => {
    const report = await tuneForInstanceType({
      instanceType,
      ...(nics ? { interfaces: interfaces(nics) } : {}),
    });
    expectValidFor1240(report);
    const [mount] = report.plan.mounts;
    expect(mount.failover).toBe(true);
    const xz = mount.processes.find((p) => p.role === 'xz')!;
    const direct = mount.processes.find((p) => p.role === 'direct')!;
    expect(flagValue(xz.args, '--maximum-throughput-gbps')).toBe(expected.gbps);
    expect(flagValue(xz.args, '--cache')).toBe(expected.cache);
    expect(xz.args.filter((a) => a === '--bind')).toHaveLength(expected.bind as number);
    expect(flagValue(xz.args, '--metadata-ttl')).toBe('indefinite');
    expect(flagValue(xz.args, '--cache-xz')).toBe('example-cache--use1-az4--x-s3');
    expect(direct.args).not.toContain('--cache-xz');
    expect(xz.args).toContain('--read-only');
    expect(Number(flagValue(xz.args, '--memory-target'))).toBeGreaterThanOrEqual(512);
    expect(Number(flagValue(xz.args, '--max-cache-size'))).toBeGreaterThan(
      Number(flagValue(direct.args, '--max-cache-size')),
    );
    expect(xz.environment).toEqual({ AWS_MAX_ATTEMPTS: '5' });
    // Mountpoint sends nothing at exit: every process exports often enough that a stop loses little.
    for (const p of [xz, direct]) expect(flagValue(p.args, '--otlp-export-interval')).toBe('10');
    expect(formatTuneReport(report)).toMatchSnapshot();
  });

  test('a multi-card type without the interface list leaves --bind to the instance and uses one card', async () => {
    const report = await tuneForInstanceType({ instanceType: 'p5.48xlarge' });
    const xz = report.plan.mounts[0].processes[0];
    expect(xz.args).not.toContain('--bind');
    expect(flagValue(xz.args, '--maximum-throughput-gbps')).toBe('100');
    expect(report.plan.host.find((d) => d.setting === '--bind')?.reason).toMatch(/decided by `up`/);
  });

  test('small burstable memory: Mountpoint processes stay within a quarter of it, never below 512 MiB', async () => {
    const report = await tuneForInstanceType({ instanceType: 't3.medium' });
    for (const p of report.plan.mounts[0].processes) expect(flagValue(p.args, '--memory-target')).toBe('512');
  });
});

describe('every family in the built-in table', () => {
  // The ComputeFleet defaults (m6i/m6a/m5/m7i.large, previous generation among them) and one type each of
  // families the old 20-type table did not know.
  test.each([
    'm6i.large',
    'm6a.large',
    'm5.large',
    'm7i.large',
    'c8g.4xlarge',
    'r8g.medium',
    't4g.micro',
    'g6e.xlarge',
    'inf2.xlarge',
    'i7ie.large',
    'hpc7g.16xlarge',
    'p5en.48xlarge',
    'trn2.48xlarge',
  ])('%s', async (instanceType) => {
    const facts = FALLBACK_INSTANCE_TYPES.get(instanceType)!;
    const report = await tuneForInstanceType({ instanceType });
    expectValidFor1240(report);
    expect(report.factsSource).toMatch(/^built-in table/);
    const card = facts.networkCards[0];
    const gbps = Math.max(1, facts.burstable ? Math.ceil(card.baselineGbps) : Math.floor(card.peakGbps));
    for (const p of report.plan.mounts[0].processes) {
      expect(flagValue(p.args, '--maximum-throughput-gbps')).toBe(String(gbps));
      expect(Number(flagValue(p.args, '--memory-target'))).toBe(
        memoryTargetFor(gbps, facts.memoryMiB, 2).target,
      );
    }
    expect(report.plan.mounts[0].processes.some((p) => p.args.includes('--cache'))).toBe(true);
  });

  test('an unknown type names the closest known ones (a usage error: the user named it)', async () => {
    await expect(tuneForInstanceType({ instanceType: 'c7gn.9xlarge' })).rejects.toMatchObject({
      name: 'UsageError',
      exitStatus: 2,
      cause: new UnknownInstanceTypeError('c7gn.9xlarge', ['c7gn.8xlarge', 'c7gn.12xlarge']),
    });
    await expect(tuneForInstanceType({ instanceType: 'c7gn.9xlarge' })).rejects.toThrow(
      'unknown instance type "c7gn.9xlarge"; closest known: c7gn.8xlarge, c7gn.12xlarge',
    );
    await expect(tuneForInstanceType({ instanceType: ' M5.Large' })).rejects.toThrow(
      'unknown instance type " M5.Large"; closest known: m5.large',
    );
    await expect(tuneForInstanceType({ instanceType: 'm7gx.large' })).rejects.toThrow(
      /closest known: m7g\.large, m7gd\.large, c7g\.large$/,
    );
  });

  test('online: DescribeInstanceTypes refuses an unknown type, the table does not know it either (moto)', async () => {
    await expect(
      tuneForInstanceType({ instanceType: 'p5.96xlarge', ec2: ec2Client({ maxAttempts: 1 }) }),
    ).rejects.toThrow(
      /^unknown instance type "p5\.96xlarge"; closest known: p5\.48xlarge \(DescribeInstanceTypes: InvalidInstanceType/,
    );
  });
});

describe('--memory-target on large hosts', () => {
  test('p5.48xlarge over 32 cards: the buffers the throughput can use, capped, not 128 GiB', async () => {
    const report = await tuneForInstanceType({ instanceType: 'p5.48xlarge', interfaces: interfaces(32) });
    const decision = report.plan.host.find((d) => d.setting === '--memory-target')!;
    expect(decision.value).toBe('9363 MiB per process (2 process(es))');
    expect(decision.reason).toMatch(
      /^8000 connections x 16 MiB \(2 parts of 8 MiB\) = 128000 MiB of data buffers, capped at 8192 MiB; with Mountpoint's overhead share max\(128 MiB, target\/8\) that is 9363 MiB;/,
    );
    expect(decision.fact).toMatch(
      /doc\/CONFIGURATION\.md .*2\/4\/8 GiB for targets up to 25\/75\/above 75 Gbps/,
    );
    for (const p of report.plan.mounts[0].processes)
      expect(flagValue(p.args, '--memory-target')).toBe('9363');
  });

  test('derivation: buffers for N/0.4 connections plus overhead max(128 MiB, target/8), floor 512, cap and share', () => {
    expect(memoryTargetFor(1, 4096, 2)).toMatchObject({
      connections: 10,
      buffers: 160,
      wanted: 288,
      target: 512,
    });
    // 50 MB/s a connection would take 32 MiB parts; 250 x 2 x 32 MiB is over the cap, so 16 MiB.
    expect(memoryTargetFor(100, 786432, 2)).toMatchObject({
      connections: 250,
      byLatency: 32,
      partMiB: 16,
      buffers: 8000,
      wanted: 9143,
    });
    expect(memoryTargetFor(200, 131072, 2)).toMatchObject({ partMiB: 8, target: 9143 });
    expect(memoryTargetFor(3200, 2097152, 2)).toMatchObject({ buffers: MAX_DATA_BUFFERS_MIB, target: 9363 });
    // The job's share wins over what the throughput could use: 25% of 8 GiB over two processes.
    // ...and the part falls back to Mountpoint's 8 MiB when larger ones do not fit it.
    expect(memoryTargetFor(25, 8192, 2)).toMatchObject({
      byLatency: 32,
      partMiB: 8,
      wanted: 1152,
      ceiling: 1024,
      target: 1024,
    });
  });

  test('--read-part-size: from the per-connection rate, 8 to 32 MiB, halved to fit memory, never below 8 MiB', () => {
    // 1 Gbps over the CRT's 10 connections: 12.5 MB/s x 0.5 s = 6.0 MiB -> Mountpoint's 8 MiB.
    expect(memoryTargetFor(1, 4096, 1)).toMatchObject({ connections: 10, partMiB: 8 });
    // 2 Gbps: 25 MB/s -> 11.9 MiB -> 16 MiB.
    expect(memoryTargetFor(2, 16384, 1)).toMatchObject({ connections: 10, byLatency: 16, partMiB: 16 });
    // 10 Gbps (g5.xlarge): 25 connections of 50 MB/s -> 23.8 MiB -> 32 MiB; 2 x 32 MiB each = 1600 MiB of buffers.
    expect(memoryTargetFor(10, 16384, 1)).toMatchObject({
      connections: 25,
      partMiB: 32,
      buffers: 1600,
      target: 1829,
    });
    // Same rate, two processes on 8 GiB: 32 MiB parts would want 1829 MiB each of the 1024 MiB share, 16 MiB 928.
    expect(memoryTargetFor(10, 8192, 2)).toMatchObject({ partMiB: 16, target: 928 });
    // ...on 4 GiB (512 MiB each) only Mountpoint's 8 MiB fits.
    expect(memoryTargetFor(10, 4096, 2)).toMatchObject({ partMiB: 8, target: 512 });
    for (const gbps of [1, 3, 5, 12, 25, 50, 100, 200, 400, 3200])
      for (const totalMiB of [512, 4096, 65536, 2097152]) {
        const m = memoryTargetFor(gbps, totalMiB, 2);
        expect([8, 16, 32]).toContain(m.partMiB);
        expect(m.partMiB).toBeLessThanOrEqual(m.byLatency);
        expect(m.buffers).toBeLessThanOrEqual(MAX_DATA_BUFFERS_MIB);
      }
  });

  test('tune explains the part size and the prefetcher it leaves alone, and renders --read-part-size', async () => {
    const report = await tuneForInstanceType({ instanceType: 'g5.xlarge' });
    const part = report.plan.host.find((d) => d.setting === '--read-part-size')!;
    expect(part.value).toBe('33554432 (32 MiB)');
    expect(part.reason).toMatch(
      /^each of 25 connections carries 50\.0 MB\/s; .* a 256 MiB shard costs 9 GETs instead of 33$/,
    );
    expect(part.fact).toMatch(/use-byte-range-fetches/);
    const prefetch = report.plan.host.find((d) => d.setting === 'prefetch window')!;
    expect(prefetch.reason).toMatch(
      /^a sequential reader gets a first GET of 1\.125 MiB; the GET for the rest of the file starts once half/,
    );
    expect(prefetch.fact).toMatch(
      /no command-line flag; .*UNSTABLE_MOUNTPOINT_MAX_PREFETCH_WINDOW_SIZE .* not set$/,
    );
    for (const p of report.plan.mounts[0].processes)
      expect(flagValue(p.args, '--read-part-size')).toBe('33554432');
    expect(formatTuneReport(report)).toContain(
      '  --read-part-size = 33554432 (32 MiB)\n      why:  each of 25',
    );
  });

  test('for every type in the table, with every card bound: within the cap and the 25% share, never below 512', () => {
    const config = parseAgentConfig({
      version: 1,
      fleetId: 'all',
      region: 'us-east-1',
      mounts: [{ bucket: 'data', path: '/mnt/data', dataset: 'immutable', cache: 'none' }],
    });
    const cap = Math.ceil((MAX_DATA_BUFFERS_MIB * 8) / 7); // 9363 MiB: 8 GiB of buffers, 1/8 overhead
    for (const [name] of INSTANCE_TYPE_ROWS) {
      const instance = FALLBACK_INSTANCE_TYPES.get(name)!;
      const plan = planMounts({
        config,
        instance,
        memory: { totalMiB: instance.memoryMiB, source: 'table' },
        cacheVolume: { kind: 'none', reason: 'no cache volume in this test' },
        interfaces: interfaces(instance.networkCards.length),
      });
      const target = plan.mounts[0].processes[0].options.memoryTargetMiB!;
      expect(target).toBeGreaterThanOrEqual(MIN_MEMORY_TARGET_MIB);
      expect(target).toBeLessThanOrEqual(cap);
      if (target > MIN_MEMORY_TARGET_MIB) expect(target).toBeLessThanOrEqual(instance.memoryMiB * 0.25);
    }
  });
});

test('facts come from ec2:DescribeInstanceTypes when it answers (moto)', async () => {
  const report = await tuneForInstanceType({
    instanceType: 'c6i.4xlarge',
    ec2: ec2Client({ maxAttempts: 1 }),
  });
  expect(report.factsSource).toBe('ec2:DescribeInstanceTypes');
  expect(flagValue(report.plan.mounts[0].processes[0].args, '--maximum-throughput-gbps')).toBe('12');
  expect(report.assumptions.join()).not.toMatch(/built-in table used/);
});

test('read-write and mutable mounts, throughput split over the host, no Express bucket in this zone', async () => {
  const config = mixedMountsConfig();
  const report = await tuneForInstanceType({ instanceType: 'c6i.4xlarge', config, azId: 'euw1-az3' });
  expectValidFor1240(report);
  const [out, logs, features] = report.plan.mounts.map((m) => m.processes[0].args);
  expect(report.plan.mounts.every((m) => !m.failover)).toBe(true);
  expect(out).toEqual(expect.arrayContaining(['--allow-overwrite', '--allow-delete']));
  expect(flagValue(out, '--metadata-ttl')).toBe('minimal');
  expect(out).not.toContain('--cache');
  expect(logs).not.toContain('--allow-overwrite');
  expect(logs).not.toContain('--read-only');
  expect(flagValue(logs, '--metadata-ttl')).toBe('indefinite');
  expect(flagValue(features, '--metadata-ttl')).toBe('60');
  expect(features).toContain('--read-only');
  expect(features).not.toContain('--cache-xz');
  expect(flagValue(features, '--maximum-throughput-gbps')).toBe('4'); // 12 Gbps over 3 mounts
  expect(flagValue(features, '--region')).toBe('eu-west-1');
  expect(features.slice(-2)).toEqual(['features', '/mnt/features']);
});

test('an older pinned Mountpoint gets no flag it does not have', async () => {
  const config = parseAgentConfig({
    version: 1,
    fleetId: 'old',
    region: 'us-east-1',
    mounts: [{ bucket: 'data', path: '/mnt/data', dataset: 'immutable', cache: 'local' }],
    mountpoint: { version: '1.20.0' },
  });
  const report = await tuneForInstanceType({ instanceType: 'g5.xlarge', config });
  const args = report.plan.mounts[0].processes[0].args;
  expect(args).not.toContain('--memory-target');
  expect(args).not.toContain('--otlp-endpoint');
  expect(args).not.toContain('--otlp-export-interval');
  expect(report.plan.omittedFlags).toEqual([
    { flag: '--memory-target', since: '1.24.0' },
    { flag: '--otlp-endpoint', since: '1.21.0' },
    { flag: '--otlp-export-interval', since: '1.21.0' },
  ]);
});

test('a mount with an expected bucket owner passes it to Mountpoint, a flag 1.24.0 accepts', async () => {
  const config = parseAgentConfig({
    version: 1,
    fleetId: 'owned',
    region: 'us-east-1',
    mounts: [
      { bucket: 'data', path: '/mnt/data', cache: 'local', expectedBucketOwner: '123456789012' },
      { bucket: 'other', path: '/mnt/other', cache: 'local' },
    ],
  });
  const report = await tuneForInstanceType({ instanceType: 'c6i.4xlarge', config });
  expectValidFor1240(report);
  const [owned, other] = report.plan.mounts.map((m) => m.processes[0].args);
  expect(flagValue(owned, '--expected-bucket-owner')).toBe('123456789012');
  expect(other).not.toContain('--expected-bucket-owner');
});

describe('the tuner takes the host and each mount; planMounts is the same for an agent.json', () => {
  const config = parseAgentConfig({
    version: 1,
    fleetId: 'f',
    region: 'eu-west-1',
    mounts: [
      { bucket: 'my-datasets', path: '/mnt/a', cache: 'local+express' },
      { bucket: 'my-datasets', path: '/mnt/b', cache: 'local' },
    ],
    expressCache: { buckets: { 'euw1-az1': 'cache--euw1-az1--x-s3' } },
    mountpoint: { version: '1.21.0' },
  });
  const instance = FALLBACK_INSTANCE_TYPES.get('m6i.large')!;
  const facts = {
    instance,
    memory: { totalMiB: instance.memoryMiB, source: 'test' },
    cacheVolume: { kind: 'root', directory: '/var/cache/mountfleet', capacityMiB: 4096, reason: 'test' },
  } as const;

  test("the config's Region, release and this zone's Express bucket are all the tuner reads of it", () => {
    const fromConfig = planMounts({ ...facts, config, azId: 'euw1-az1' });
    const direct = tuneMounts(
      {
        ...facts,
        azId: 'euw1-az1',
        region: 'eu-west-1',
        mountpointVersion: '1.21.0',
        expressBucket: 'cache--euw1-az1--x-s3',
      },
      config.mounts,
    );
    expect(fromConfig).toEqual(direct);
    expect(direct.mounts.map((m) => m.failover)).toEqual([true, false]);
    expect(direct.omittedFlags).toEqual([{ flag: '--memory-target', since: '1.24.0' }]);
    expect(flagValue(direct.mounts[1].processes[0].args, '--region')).toBe('eu-west-1');
  });

  test('a zone without a bucket, or no zone at all, gives no Express bucket and no failover pair', () => {
    for (const azId of ['euw1-az2', undefined]) {
      const plan = planMounts({ ...facts, config, ...(azId ? { azId } : {}) });
      expect(plan.mounts.map((m) => m.failover)).toEqual([false, false]);
      expect(plan.mounts[0].decisions.find((d) => d.setting === '--cache-xz')?.reason).toBe(
        `no Express bucket configured for zone ${azId ?? '(unknown)'}`,
      );
    }
  });
});
