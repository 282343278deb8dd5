import { ec2Client } from '../../../core/aws';
import { parseAgentConfig } from '../../../core/config';
import { compareVersions, FLAG_FIRST_VERSION } from '../../../core/mountpoint/command-line';
import { formatTuneReport, tuneForInstanceType, type TuneReport } from '../../../core/mountpoint/tune-report';
import { useEmulator } from '../../support/emulator';
import { parseArgs } from '../../support/mount-s3-standin/cli-spec';

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
  const config = parseAgentConfig({
    version: 1,
    fleetId: 'mixed',
    region: 'eu-west-1',
    mounts: [
      {
        bucket: 'outputs',
        prefix: 'runs/',
        path: '/mnt/out',
        access: 'read-write',
        dataset: 'mutable',
        cache: 'none',
      },
      {
        bucket: 'logs',
        prefix: 'raw/',
        path: '/mnt/logs',
        access: 'read-write',
        dataset: 'immutable',
        cache: 'metadata',
      },
      { bucket: 'features', path: '/mnt/features', dataset: 'mutable', cache: 'local+express' },
    ],
    expressCache: { buckets: { 'euw1-az1': 'cache--euw1-az1--x-s3' } },
  });
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
  expect(report.plan.omittedFlags).toEqual([
    { flag: '--memory-target', since: '1.24.0' },
    { flag: '--otlp-endpoint', since: '1.21.0' },
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
