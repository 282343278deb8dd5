import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { computePlan, type PlanResult } from '../../../core/plan/model';
import { PRESETS } from '../../../core/plan/presets';
import { BUILT_IN_PRICES, resolvePrices, type RegionPrices } from '../../../core/plan/prices';
import { parseDuration } from '../../../core/common/units';
import { parseStep } from '../../../core/plan/workload';

const US = BUILT_IN_PRICES['us-east-1'];
const TOKYO = BUILT_IN_PRICES['ap-northeast-1'];
const KIB = 1024;

const cost = (plan: PlanResult, option: string) => plan.costs.find((c) => c.option === option);

/**
 * 100 GiB written in 10 min, then read three times over in 20 min: a run of 30 min. Stored: 100 GiB grows
 * linearly over the first 600 s (average 50 GiB), then stays for 1,200 s: 150,000 GiB-s.
 */
function writeThenRead(options: { readBytes?: number; prices?: RegionPrices } = {}) {
  return computePlan(
    {
      input: { gib: 100 },
      steps: [parseStep('stage:write=1,time=10m'), parseStep('scan:read=3,time=20m')],
      runSeconds: parseDuration('30m'),
    },
    options.prices ?? US,
    { readBytes: options.readBytes },
  );
}

describe('plan model: S3 Files costs, computed by hand', () => {
  // us-east-1: storage $0.30/GB-month (720 h), reads $0.03/GB, writes $0.06/GB.
  const storageUsd = (150_000 / 3600 / 720) * 0.3;
  const writeAndExportUsd = 100 * 0.06 + 100 * 0.03;

  it('large reads (1 MiB, the default) stream from the bucket: only a 4 KiB metadata read per read is charged', () => {
    const plan = writeThenRead();
    const metadataGib = 300 * 1024 * (4 / 1024 / 1024); // 307,200 reads of 1 MiB, 4 KiB each
    expect(plan.s3Files.readsDirect).toBe(true);
    expect(plan.s3Files.meteredGib).toEqual({
      write: 100,
      exportRead: 100,
      dataRead: 0,
      metadataRead: metadataGib,
    });
    expect(cost(plan, 's3-files')?.usd).toBeCloseTo(storageUsd + writeAndExportUsd + metadataGib * 0.03, 9);
    expect(cost(plan, 's3-files')?.usd).toBeCloseTo(9.05252, 5);
  });

  it('reads below 1 MiB are charged at their size, and at 32 KiB when smaller, plus the metadata read', () => {
    const at64 = writeThenRead({ readBytes: 64 * KIB });
    expect(at64.s3Files.readsDirect).toBe(false);
    // 300 GiB in 64 KiB reads: 300 GiB of data, 300 x 4/64 = 18.75 GiB of metadata.
    expect(cost(at64, 's3-files')?.usd).toBeCloseTo(storageUsd + writeAndExportUsd + (300 + 18.75) * 0.03, 9);
    const at16 = writeThenRead({ readBytes: 16 * KIB });
    // 16 KiB reads are metered at the 32 KiB minimum: 600 GiB, plus 300 x 4/16 = 75 GiB of metadata.
    expect(cost(at16, 's3-files')?.usd).toBeCloseTo(storageUsd + writeAndExportUsd + (600 + 75) * 0.03, 9);
  });

  it('checks the busiest step against the 1 GiB/s aggregate write and the 3 GiB/s per-client read', () => {
    const fits = writeThenRead();
    expect(fits.s3Files.checks.map((c) => c.fits)).toEqual([true, true]);
    expect(cost(fits, 's3-files')?.feasible).toBe(true);
    const plan = (write: string, read: string) =>
      computePlan(
        {
          input: { gib: 60 },
          steps: [parseStep(`stage:write=${write},time=1m`), parseStep(`scan:read=${read},time=1m`)],
          runSeconds: 120,
        },
        US,
      );
    // 60 GiB in 60 s is 1 GiB/s: at the limit, fits; 3 GiB/s of reads likewise.
    expect(plan('1', '3').s3Files.checks.map((c) => c.fits)).toEqual([true, true]);
    const over = plan('1.01', '3.01');
    expect(over.s3Files.checks.map((c) => c.fits)).toEqual([false, false]);
    expect(cost(over, 's3-files')?.feasible).toBe(false);
    expect(cost(over, 's3-files')?.detail).toMatch(/writes 1034 MiB\/s, above the 1 GiB\/s aggregate write/);
    expect(cost(over, 's3-files')?.detail).toMatch(/reads 3082 MiB\/s, above the 3 GiB\/s per-client read/);
  });
});

describe('plan model: when S3 Files wins (the crossovers of docs/planning.md)', () => {
  /** W GiB written in 10 min, then read k times over in 50 min. */
  const readHeavy = (k: number, prices: RegionPrices = US) =>
    computePlan(
      {
        input: { gib: 10 },
        steps: [parseStep('stage:write=1,time=10m'), parseStep(`scan:read=${k},time=50m`)],
        runSeconds: 3600,
      },
      prices,
    );

  it('beats EFS elastic once large reads exceed writes plus the storage difference: k* = (W x 0.03 + GiB-h x 0.14/720) / (W x 0.03 x 255/256)', () => {
    // Both store the same curve: 10 GiB over 10 min (average 5), then 50 min: 5/6 + 50/6 = 9.1667 GiB-h.
    const gibHours = (5 * 600 + 10 * 3000) / 3600;
    const crossover = (10 * 0.03 + (gibHours * (0.3 - 0.16)) / 720) / (10 * 0.03 * (1 - 1 / 256));
    expect(crossover).toBeCloseTo(1.0099, 4);
    const below = readHeavy(crossover * 0.99);
    expect(cost(below, 's3-files')!.usd).toBeGreaterThan(cost(below, 'efs-one-zone-elastic')!.usd);
    const above = readHeavy(crossover * 1.01);
    expect(cost(above, 's3-files')!.usd).toBeLessThan(cost(above, 'efs-one-zone-elastic')!.usd);
  });

  it('never beats gp3 at 2x the used size on cost: $0.30 per GB-month stored is above 2 x $0.08, before any access charge', () => {
    for (const k of [0, 1, 10, 100]) {
      for (const hours of [1, 24, 24 * 30]) {
        const plan = computePlan(
          {
            input: { gib: 10 },
            steps: [parseStep('stage:write=1,time=1m'), parseStep(`scan:read=${k}`)],
            runSeconds: hours * 3600,
          },
          US,
        );
        expect(cost(plan, 's3-files')!.usd).toBeGreaterThan(cost(plan, 'ebs-gp3-2x')!.usd);
      }
    }
  });

  it('is recommended when it is the cheapest option that carries the run: bursting out of credit, gp3 dearer', () => {
    // 9,000 GiB read is 3,000 GiB metered: more than the 2,150 GiB credit.
    const prices = { ...US, ebsGp3StorageGbMonth: 200 };
    const plan = readHeavy(900, prices);
    expect(cost(plan, 'efs-one-zone-bursting')?.feasible).toBe(false);
    expect(plan.recommendation.option).toBe('s3-files');
    expect(plan.recommendation.reason).toMatch(
      /^bursting cannot carry this run .*; S3 Files is the cheapest that can$/,
    );
  });
});

describe('plan model: S3 Files prices that are unknown', () => {
  it('leaves S3 Files out of the comparison in a region without its prices, saying which are unknown', () => {
    const plan = computePlan(
      {
        input: { gib: 30.12, durationSeconds: 1800 },
        steps: PRESETS['encode-ladder'].steps,
        runSeconds: parseDuration('54:59'),
      },
      TOKYO,
    );
    expect(cost(plan, 's3-files')).toBeUndefined();
    expect(plan.s3Files.unknown).toEqual([
      'S3 Files prices for ap-northeast-1 (s3FilesStorageGbMonth, s3FilesReadPerGb, s3FilesWritePerGb): give them with --price KEY=VALUE',
    ]);
    expect(plan.notes.some((n) => n.startsWith('S3 Files'))).toBe(false);
  });

  it('compares it once the prices are given (--price), and still reads a price file without them', () => {
    const prices = resolvePrices({
      region: 'ap-northeast-1',
      overrides: ['s3FilesStorageGbMonth=0.36', 's3FilesReadPerGb=0.04', 's3FilesWritePerGb=0.07'],
    });
    const plan = writeThenRead({ prices });
    expect(plan.s3Files.unknown).toEqual([]);
    expect(cost(plan, 's3-files')?.usd).toBeCloseTo(
      (150_000 / 3600 / 720) * 0.36 + 100 * 0.07 + (100 + 300 * (4 / 1024)) * 0.04,
      9,
    );

    const file = join(mkdtempSync(join(tmpdir(), 'prices-')), 'prices.json');
    const { s3FilesStorageGbMonth, s3FilesReadPerGb, s3FilesWritePerGb, ...withoutS3Files } = US;
    expect([s3FilesStorageGbMonth, s3FilesReadPerGb, s3FilesWritePerGb]).toEqual([0.3, 0.03, 0.06]);
    writeFileSync(file, JSON.stringify(withoutS3Files));
    const fromFile = writeThenRead({ prices: resolvePrices({ region: 'us-east-1', file }) });
    expect(cost(fromFile, 's3-files')).toBeUndefined();
    expect(fromFile.s3Files.unknown[0]).toMatch(/^S3 Files prices for us-east-1 \(s3FilesStorageGbMonth, /);
  });
});
