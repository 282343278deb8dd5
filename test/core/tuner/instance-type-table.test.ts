/**
 * The generated instance-type table: it parses, covers the library's default types and the families
 * fleets run, is exactly what the generator makes from the emulator's DescribeInstanceTypes (moto ships
 * the same snapshot), and the generator reads `aws ec2 describe-instance-types` pages from files.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { Template } from 'aws-cdk-lib/assertions';
import { FALLBACK_INSTANCE_TYPES } from '../../../core/tuner/instance-facts';
import { INSTANCE_TYPE_ROWS, INSTANCE_TYPE_SNAPSHOT } from '../../../core/tuner/instance-type-table';
import { ComputeFleet, FleetNetwork } from '../../../lib/index';
import { buildTable, describeAll, EXPECTED_FAMILIES, main } from '../../../scripts/generate-instance-types';
import { useEmulator } from '../../support/emulator';
import { ensureBundles, REPO, testStack } from '../../lib/support';

const GENERATOR = join(REPO, 'scripts', 'generate-instance-types.ts');

useEmulator();

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-types-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('every row parses into facts that tuning can use', () => {
  expect(INSTANCE_TYPE_ROWS.length).toBeGreaterThan(1000);
  expect(INSTANCE_TYPE_SNAPSHOT.types).toBe(INSTANCE_TYPE_ROWS.length);
  expect(INSTANCE_TYPE_SNAPSHOT.date).toMatch(/^\d{4}-\d{2}(-\d{2})?$/);
  expect(FALLBACK_INSTANCE_TYPES.size).toBe(INSTANCE_TYPE_ROWS.length);
  for (const [name, architecture, vCpus, memoryMiB, , , , store, , flags] of INSTANCE_TYPE_ROWS) {
    const facts = FALLBACK_INSTANCE_TYPES.get(name)!;
    expect(['x86_64', 'arm64']).toContain(architecture);
    expect(vCpus).toBeGreaterThan(0);
    expect(facts.memoryMiB).toBe(memoryMiB);
    expect(facts.networkCards.length).toBeGreaterThan(0);
    facts.networkCards.forEach((c, i) => {
      expect(c.index).toBe(i);
      expect(c.baselineGbps).toBeGreaterThan(0);
      expect(c.peakGbps).toBeGreaterThanOrEqual(c.baselineGbps);
    });
    expect(flags).toMatch(/^b?p?$/);
    // Only NVMe disks become a cache volume: the agent finds them by their NVMe model string.
    expect(facts.instanceStore !== undefined).toBe(Boolean(store?.[2]));
  }
});

test('known facts of a few types, one per family shape', () => {
  const p5 = FALLBACK_INSTANCE_TYPES.get('p5.48xlarge')!;
  expect(p5.networkCards).toHaveLength(32);
  expect(p5.instanceStore).toEqual({ disks: 8, diskSizeGB: 3800 });
  expect(FALLBACK_INSTANCE_TYPES.get('t3.large')).toMatchObject({ burstable: true, memoryMiB: 8192 });
  expect(FALLBACK_INSTANCE_TYPES.get('c8g.4xlarge')).toMatchObject({
    architecture: 'arm64',
    burstable: false,
  });
  // Cards that differ are kept per card (card 0 of p6-b300 has 350 Gbps, the others 400).
  const b300 = FALLBACK_INSTANCE_TYPES.get('p6-b300.48xlarge')!.networkCards;
  expect(b300[0].peakGbps).toBe(350);
  expect(b300.slice(1).every((c) => c.peakGbps === 400)).toBe(true);
  // A non-NVMe instance store is listed in the table but is no cache volume.
  const h1 = INSTANCE_TYPE_ROWS.find((r) => r[0] === 'h1.2xlarge')!;
  expect(h1[7]).toEqual([1, 2000, false]);
  expect(FALLBACK_INSTANCE_TYPES.get('h1.2xlarge')!.instanceStore).toBeUndefined();
});

test("covers the ComputeFleet construct's default instance types and the families fleets run", () => {
  ensureBundles();
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4'] });
  new ComputeFleet(stack, 'Fleet', { fleetId: 'defaults', network });
  const [asg] = Object.values(Template.fromStack(stack).findResources('AWS::AutoScaling::AutoScalingGroup'));
  const overrides = (
    asg as {
      Properties: { MixedInstancesPolicy: { LaunchTemplate: { Overrides: { InstanceType: string }[] } } };
    }
  ).Properties.MixedInstancesPolicy.LaunchTemplate.Overrides.map((o) => o.InstanceType);
  expect(overrides.length).toBeGreaterThan(0);
  for (const t of overrides) expect(FALLBACK_INSTANCE_TYPES.has(t)).toBe(true);
  const families = new Set(INSTANCE_TYPE_ROWS.map((r) => r[0].split('.')[0]));
  expect(EXPECTED_FAMILIES.filter((f) => !families.has(f))).toEqual([]);
});

test('the table is what the generator makes from the emulator’s DescribeInstanceTypes (same snapshot)', async () => {
  const table = buildTable(await describeAll(['us-east-1'], false));
  expect(table.rows).toEqual(INSTANCE_TYPE_ROWS);
  expect([...table.leftOut.keys()]).toEqual(['mac (macOS; Mountpoint runs on Linux only)']);
});

/** What a bundle of `entry` carries: modules with bytes in the output (one only read on the way is dropped). */
async function bundleInputs(entry: string, external: string[] = []): Promise<string[]> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [join(REPO, entry)],
    bundle: true,
    platform: 'node',
    write: false,
    metafile: true,
    logLevel: 'silent',
    external,
  });
  // A module reached only through an index whose export is not used is read, listed in metafile.inputs, and dropped.
  const [output] = Object.values(result.metafile.outputs);
  return Object.entries(output.inputs).flatMap(([file, input]) => (input.bytesInOutput > 0 ? [file] : []));
}

const TABLE_MODULE = 'core/tuner/instance-type-table.ts';

// One bundle a test: each builds on its own, so a busy machine stretches one test, not one test by four builds.
test('the table goes into the agent bundle', async () => {
  expect(await bundleInputs('agent/main.ts')).toContain(TABLE_MODULE);
});

test.each(readdirSync(join(REPO, 'lambda')))('no Lambda bundle carries the table: %s', async (name) => {
  expect(await bundleInputs(`lambda/${name}/index.ts`, ['@aws-sdk/*', '@smithy/*'])).not.toContain(
    TABLE_MODULE,
  );
});

describe('generator from files', () => {
  const info = (name: string, extra: Partial<InstanceTypeInfo> = {}): InstanceTypeInfo => ({
    InstanceType: name as never,
    CurrentGeneration: true,
    BurstablePerformanceSupported: false,
    ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
    VCpuInfo: { DefaultVCpus: 8 },
    MemoryInfo: { SizeInMiB: 32768 },
    NetworkInfo: {
      NetworkPerformance: 'Up to 12.5 Gigabit',
      NetworkCards: [{ NetworkCardIndex: 0, BaselineBandwidthInGbps: 3.125, PeakBandwidthInGbps: 12.5 }],
    },
    ...extra,
  });
  const pages = [
    {
      InstanceTypes: [
        info('zz1.2xlarge'),
        info('zz1d.2xlarge', {
          InstanceStorageInfo: { Disks: [{ Count: 1, SizeInGB: 474, Type: 'ssd' }], NvmeSupport: 'required' },
        }),
      ],
      NextToken: 'page-2',
    },
    {
      InstanceTypes: [
        info('zz0.large', { CurrentGeneration: false, BurstablePerformanceSupported: true }),
        info('zz1.2xlarge'), // the same type again, as in pages merged over Regions
        info('mac9.metal', { ProcessorInfo: { SupportedArchitectures: ['arm64_mac'] } }),
        info('zz2.96xlarge', {
          NetworkInfo: {
            NetworkPerformance: '2x 100 Gigabit',
            NetworkCards: [
              { NetworkCardIndex: 1, BaselineBandwidthInGbps: 100, PeakBandwidthInGbps: 100 },
              { NetworkCardIndex: 0, BaselineBandwidthInGbps: 50, PeakBandwidthInGbps: 50 },
            ],
          },
        }),
      ],
    },
  ];

  test('pages (plain and gzipped) become one sorted table with its snapshot header', () => {
    const first = join(dir, 'page-1.json');
    const second = join(dir, 'page-2.json.gz');
    writeFileSync(first, JSON.stringify(pages[0]));
    writeFileSync(second, gzipSync(JSON.stringify(pages[1])));
    const out = join(dir, 'table.ts');
    const source = 'aws ec2 describe-instance-types --region us-east-1 (test pages)';
    const run = spawnSync(
      process.execPath,
      [
        '--require',
        'tsx/cjs',
        GENERATOR,
        '--from-file',
        first,
        second,
        '--source',
        source,
        '--snapshot-date',
        '2026-11-24',
        '--out',
        out,
      ],
      { cwd: REPO, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toContain(`${out}: 4 types; expected families absent: c6i,`);
    expect(run.status).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^\/\/ Generated by scripts\/generate-instance-types\.ts/);
    expect(text).toContain(`// Snapshot: ${source}, taken 2026-11-24.`);
    expect(text).toContain('// 4 instance types: 3 current generation, 1 previous generation.');
    expect(text).toContain('// Left out: 1 mac (macOS; Mountpoint runs on Linux only).');
    expect(text).toMatch(/Expected families absent from the snapshot: c6i, c7gn,/);
    expect(text).toContain(
      "['zz0.large', 'x86_64', 8, 32768, 1, 3.125, 12.5, null, 'Up to 12.5 Gigabit', 'bp'],",
    );
    expect(text).toContain(
      "['zz1d.2xlarge', 'x86_64', 8, 32768, 1, 3.125, 12.5, [1, 474, true], 'Up to 12.5 Gigabit', ''],",
    );
    expect(text).toContain('[50, 50],\n      [100, 100],');
    expect(text.indexOf("'zz0.large'")).toBeLessThan(text.indexOf("'zz1.2xlarge'"));
  });

  test('--current-generation-only drops previous-generation types', () => {
    const table = buildTable([...pages[0].InstanceTypes, ...pages[1].InstanceTypes], true);
    expect(table.rows.map((r) => r[0])).toEqual(['zz1.2xlarge', 'zz1d.2xlarge', 'zz2.96xlarge']);
  });

  test.each([
    [[], /give either --from-file FILE\.\.\. or --region R/],
    [['--from-file', 'x.json', '--region', 'us-east-1'], /not both/],
    [['--from-file', 'x.json', '--snapshot-date', '2026-11-24'], /--from-file needs --source/],
    [
      ['--from-file', 'x.json', '--source', 's', '--snapshot-date', 'yesterday'],
      /--snapshot-date YYYY-MM-DD/,
    ],
    [['--bogus'], /Unknown option '--bogus'/],
  ])('usage error %j exits 2', async (args, message) => {
    let stderr = '';
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
    try {
      expect(await main(args)).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(stderr).toMatch(message);
    expect(stderr).toMatch(/usage: generate-instance-types/);
  });

  test('a file that is not DescribeInstanceTypes output is refused by name', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ Reservations: [] }));
    let stderr = '';
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
    try {
      expect(await main(['--from-file', bad, '--source', 's', '--snapshot-date', '2026-11'])).toBe(1);
    } finally {
      spy.mockRestore();
    }
    expect(stderr).toContain(`${bad}: not DescribeInstanceTypes output`);
  });
});
