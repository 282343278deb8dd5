import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlanResult } from '../../../core/plan/model';
import { runCliInProcess } from '../../support/cli';

/** Runs the CLI in-process and captures what it writes. */
const mountfleet = runCliInProcess;

const ENCODE_LADDER = [
  '--preset',
  'encode-ladder',
  '--input-size',
  '30.12GiB',
  '--duration',
  '30m',
  '--run-time',
  '54m59s',
];

describe('mountfleet plan', () => {
  it("prints the encode ladder's plan as a table on stdout (the result), nothing on stderr", async () => {
    const r = await mountfleet(
      'plan',
      ...ENCODE_LADDER,
      '--region',
      'ap-northeast-1',
      '--at-bitrate',
      '50,147,503',
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^total\s+361\.92\s+32\.26\s+152\.90/m);
    expect(r.stdout).toMatch(/the 2\.1 TiB credit survives/);
    expect(r.stdout).toMatch(/^147 Mbps\s+\S+\s+6 h 5\d min/m);
    expect(r.stdout).toMatch(/^use: EFS One Zone, bursting/m);
    expect(r.stdout).toMatch(/prices as of 2026-06/);
  });

  it('says in the table itself which rows the recommendation compares (gp3 at the used size is a bound)', async () => {
    const r = await mountfleet('plan', ...ENCODE_LADDER, '--region', 'ap-northeast-1');
    expect(r.stdout).toMatch(/^storage\s+cost\s+fits\s+compared\s+how$/m);
    expect(r.stdout).toMatch(/^EBS gp3, used size\s+\$0\.00403\s+yes\s+no, bound\s/m);
    expect(r.stdout).toMatch(/^EBS gp3, 2x used size\s+\$0\.00806\s+yes\s+yes\s/m);
    expect(r.stdout).toMatch(/^EBS gp3, used size \(\$0\.00403\) is the lower bound, not compared: /m);
    expect(r.stdout).toMatch(/^use: EFS One Zone, bursting — cheapest compared option that fits/m);
  });

  it('prints one JSON document with --json, honouring price overrides', async () => {
    const r = await mountfleet(
      'plan',
      ...ENCODE_LADDER,
      '--region',
      'us-east-1',
      '--price',
      'efsOneZoneStorageGbMonth=1',
      '--json',
    );
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as PlanResult;
    expect(plan.prices.efsOneZoneStorageGbMonth).toBe(1);
    expect(plan.totals.meteredGib).toBeCloseTo(152.9, 1);
    // At $1/GB-month EFS storage no longer beats gp3 at twice the used size.
    expect(plan.recommendation.option).toBe('ebs-gp3-2x');
  });

  it('reads a JSON workload file and adds --step steps after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plan-'));
    const file = join(dir, 'workload.json');
    writeFileSync(
      file,
      JSON.stringify({
        input: { duration: '10m', bitrate: '100Mbps' },
        steps: [
          { name: 'stage', write: '1' },
          { name: 'scan', read: '3', time: '5m' },
        ],
        runTime: '20m',
      }),
    );
    const r = await mountfleet('plan', '--workload', file, '--step', 'report:write=200MiB', '--json');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as PlanResult;
    expect(plan.steps.map((s) => s.name)).toEqual(['stage', 'scan', 'report']);
    expect(plan.steps[1].seconds).toBe(300);
    expect(plan.steps[2].writeGib).toBeCloseTo(200 / 1024, 9);
    expect(plan.input.gib).toBeCloseTo((100e6 * 600) / 8 / 1024 ** 3, 9);
  });

  it('compares S3 Files in us-east-1: a row in the table, the run checked against its limits, and in --json', async () => {
    const text = await mountfleet('plan', ...ENCODE_LADDER, '--region', 'us-east-1');
    expect(text.code).toBe(0);
    // 32.26 GiB written and exported ($0.06 + $0.03), 361.92 GiB read in 1 MiB reads (4 KiB metadata each),
    // 27.0 GiB-h stored at $0.30 per 720 h.
    expect(text.stdout).toMatch(
      /^S3 Files\s+\$2\.96\s+yes\s+yes\s+storage \+ 32\.3 GiB written, exported; reads from the bucket$/m,
    );
    expect(text.stdout).toMatch(
      /^S3 Files limits: busiest step writes 122 MiB\/s, within the 1 GiB\/s aggregate write/m,
    );
    expect(text.stdout).toMatch(/^use: EFS One Zone, bursting/m);

    const r = await mountfleet(
      'plan',
      ...ENCODE_LADDER,
      '--region',
      'us-east-1',
      '--read-size',
      '64KiB',
      '--json',
    );
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as PlanResult;
    const row = plan.costs.find((c) => c.option === 's3-files');
    expect(row?.compared).toBe(true);
    expect(plan.s3Files.readBytes).toBe(64 * 1024);
    expect(plan.s3Files.meteredGib.dataRead).toBeCloseTo(plan.totals.readGib, 9);
    expect(plan.s3Files.meteredGib.metadataRead).toBeCloseTo(plan.totals.readGib / 16, 9);
    expect(row?.usd).toBeCloseTo(
      (plan.storage.gibHours / 720) * 0.3 +
        plan.totals.writeGib * (0.06 + 0.03) +
        ((plan.totals.readGib * 17) / 16) * 0.03,
      9,
    );
    expect(
      plan.prices.sources.some((s) => s.startsWith('https://aws.amazon.com/s3/pricing/ (S3 Files')),
    ).toBe(true);
  });

  it('leaves S3 Files out in Tokyo, whose prices are unknown, and says so; --price fills them in', async () => {
    const r = await mountfleet('plan', ...ENCODE_LADDER, '--region', 'ap-northeast-1');
    expect(r.stdout).not.toMatch(/^S3 Files\s+\$/m);
    expect(r.stdout).toMatch(
      /^S3 Files: left out of the comparison — unknown: S3 Files prices for ap-northeast-1 \(s3FilesStorageGbMonth, s3FilesReadPerGb, s3FilesWritePerGb\): give them with --price KEY=VALUE$/m,
    );
    const given = await mountfleet(
      'plan',
      ...ENCODE_LADDER,
      '--region',
      'ap-northeast-1',
      '--price',
      's3FilesStorageGbMonth=0.3',
      '--price',
      's3FilesReadPerGb=0.03',
      '--price',
      's3FilesWritePerGb=0.06',
    );
    expect(given.stdout).toMatch(/^S3 Files\s+\$2\.96\s+yes\s+yes\s/m);
    expect(given.stdout).not.toMatch(/unknown:/);
  });

  it('refuses a --read-size that is not a positive size (exit 2)', async () => {
    const r = await mountfleet('plan', ...ENCODE_LADDER, '--read-size', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--read-size "0": must be more than 0/);
  });

  it('exits 2 with a message naming what is missing', async () => {
    const noRun = await mountfleet('plan', '--preset', 'encode-ladder', '--input-size', '1GiB');
    expect(noRun.code).toBe(2);
    expect(noRun.stderr).toMatch(/--run-time/);
    const badStep = await mountfleet(
      'plan',
      '--input-size',
      '1GiB',
      '--run-time',
      '1m',
      '--step',
      'x:read=fast',
    );
    expect(badStep.code).toBe(2);
    expect(badStep.stderr).toMatch(/multiple of the input/);
  });
});
