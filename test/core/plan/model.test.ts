import { INITIAL_BURST_CREDIT_GIB } from '../../../core/credit/model';
import { computePlan } from '../../../core/plan/model';
import { PRESETS } from '../../../core/plan/presets';
import { BUILT_IN_PRICES, resolvePrices, type RegionPrices } from '../../../core/plan/prices';
import { parseBytes, parseDuration, parseMbps } from '../../../core/common/units';
import { UsageError } from '../../../core/common/errors';
import { parseStep, resolveInput } from '../../../core/plan/workload';

const TOKYO = BUILT_IN_PRICES['ap-northeast-1'];

/** The measured 30-minute ProRes encode ladder (docs/planning.md): 30.12 GiB ProRes 422 (30 min), six renditions two-pass + audio, 54:59 on EFS. */
function encodeLadderPlan(prices: RegionPrices = TOKYO) {
  return computePlan(
    {
      input: { gib: 30.12, durationSeconds: parseDuration('30m') },
      steps: PRESETS['encode-ladder'].steps,
      runSeconds: parseDuration('54:59'),
    },
    prices,
    { atBitratesMbps: [50, 147, 503] },
  );
}

const within = (actual: number, expected: number, fraction: number) =>
  expect(Math.abs(actual - expected) / expected).toBeLessThanOrEqual(fraction);

describe('plan model: the 30-minute ProRes encode ladder, reproduced', () => {
  const plan = encodeLadderPlan();

  it('computes the credit use within 5% of the measurement (152.18 GiB computed, 150.10 GiB measured)', () => {
    within(plan.totals.meteredGib, 152.18, 0.05);
    within(plan.totals.meteredGib, 150.1, 0.05);
    // The measured figure is the fall of BurstCreditBalance, which the baseline partly refills.
    within(plan.bursting.netCreditUsedGib, 150.1, 0.05);
  });

  it('estimates credit exhaustion within 10% of the measurement (19 h 20 min, 6 h 50 min, 2 h)', () => {
    const hours = Object.fromEntries(plan.exhaustion.map((e) => [e.inputMbps, e.contentHours]));
    within(hours[50], 19 + 20 / 60, 0.1);
    within(hours[147], 6 + 50 / 60, 0.1);
    within(hours[503], 2, 0.1);
  });

  it('derives the metered volume from the workload: the input written once, read twice per rendition at 1/3', () => {
    const input = 30.12;
    const download = plan.steps.find((s) => s.name === 'download');
    expect(download?.writeGib).toBeCloseTo(input, 6);
    for (const name of ['144p', '240p', '360p', '480p', '720p', '1080p']) {
      const step = plan.steps.find((s) => s.name === name);
      expect(step?.readGib).toBeCloseTo(2 * input, 6);
      expect(step?.meteredGib).toBeCloseTo((2 * input) / 3 + (step?.writeGib ?? NaN), 6);
    }
    // Outputs and audio are the only terms not fixed by the input: they are a few GiB at most.
    expect(plan.totals.meteredGib - (input + (12 * input) / 3)).toBeGreaterThan(0);
    expect(plan.totals.meteredGib - (input + (12 * input) / 3)).toBeLessThan(5);
  });

  it('keeps the credit, recommends bursting, and prices EFS near the measurement ($0.00756) and between gp3 1x and 2x', () => {
    expect(plan.bursting.creditSurvives).toBe(true);
    expect(plan.bursting.creditLeftGib).toBeCloseTo(
      INITIAL_BURST_CREDIT_GIB - plan.bursting.netCreditUsedGib,
      6,
    );
    expect(plan.recommendation.option).toBe('efs-one-zone-bursting');
    const cost = Object.fromEntries(plan.costs.map((c) => [c.option, c.usd]));
    within(cost['efs-one-zone-bursting'], 0.00756, 0.1);
    expect(cost['efs-one-zone-bursting']).toBeGreaterThan(cost['ebs-gp3-used']);
    expect(cost['efs-one-zone-bursting']).toBeLessThan(cost['ebs-gp3-2x']);
    expect(cost['efs-one-zone-elastic']).toBeGreaterThan(10 * cost['efs-one-zone-bursting']);
  });

  it('prices gp3 as the measurement did: 40 GiB for 59 min = $0.00524, 60 GiB = $0.00787', () => {
    // A workload that stores exactly 20 GiB (so 2x used = 40 GiB) for 59 minutes.
    const twenty = computePlan(
      { input: { gib: 20 }, steps: [parseStep('copy:write=1')], runSeconds: 59 * 60 },
      TOKYO,
    );
    within(twenty.costs.find((c) => c.option === 'ebs-gp3-2x')?.usd ?? NaN, 0.00524, 0.005);
    const thirty = computePlan(
      { input: { gib: 30 }, steps: [parseStep('copy:write=1')], runSeconds: 59 * 60 },
      TOKYO,
    );
    within(thirty.costs.find((c) => c.option === 'ebs-gp3-2x')?.usd ?? NaN, 0.00787, 0.005);
  });
});

describe('plan model: other workloads', () => {
  it('says when the credit runs out and falls back to another storage', () => {
    // 4K ProRes (503 Mbps) for 3 hours through the same pipeline: about 3,200 GiB metered over 8 hours,
    // of which the baseline of the ~600 GiB file system earns back about 800.
    const plan = computePlan(
      {
        input: { durationSeconds: 3 * 3600, bitrateMbps: 503 },
        steps: PRESETS['encode-ladder'].steps,
        runSeconds: 8 * 3600,
      },
      TOKYO,
    );
    expect(plan.bursting.creditSurvives).toBe(false);
    expect(plan.bursting.runsOutAfterSeconds).toBeGreaterThan(0);
    expect(plan.bursting.runsOutAfterSeconds).toBeLessThan(plan.runSeconds);
    expect(plan.costs[0].feasible).toBe(false);
    expect(plan.recommendation.option).not.toBe('efs-one-zone-bursting');
  });

  it('flags a run that needs more than the burst rate even with credit left', () => {
    const plan = computePlan(
      { input: { gib: 100 }, steps: [parseStep('write:write=1')], runSeconds: 600 },
      TOKYO,
    );
    expect(plan.bursting.creditSurvives).toBe(true);
    expect(plan.bursting.averageMeteredMibPerS).toBeGreaterThan(100);
    expect(plan.costs[0].feasible).toBe(false);
  });

  it('adds gp3 throughput above 125 MB/s to the EBS cost', () => {
    const fast = computePlan(
      { input: { gib: 10 }, steps: [parseStep('r:read=60')], runSeconds: 1800 },
      TOKYO,
    );
    const slow = computePlan(
      { input: { gib: 10 }, steps: [parseStep('r:read=60')], runSeconds: 18000 },
      TOKYO,
    );
    expect(fast.costs[2].detail).toMatch(/MB\/s provisioned/);
    expect(slow.costs[2].detail).toMatch(/within the included/);
  });

  it('uses given step times for the storage curve', () => {
    const early = computePlan(
      {
        input: { gib: 10 },
        steps: [parseStep('w:write=1,time=1m'), parseStep('r:read=1')],
        runSeconds: 3600,
      },
      TOKYO,
    );
    const late = computePlan(
      {
        input: { gib: 10 },
        steps: [parseStep('r:read=1,time=59m'), parseStep('w:write=1')],
        runSeconds: 3600,
      },
      TOKYO,
    );
    expect(early.storage.gibHours).toBeGreaterThan(9);
    expect(late.storage.gibHours).toBeLessThan(0.2);
  });

  it('rejects what it cannot compute, naming the missing input', () => {
    expect(() =>
      computePlan({ input: { gib: 1 }, steps: [parseStep('x:write=5Mbps')], runSeconds: 60 }, TOKYO),
    ).toThrow(/--duration/);
    expect(() => computePlan({ input: { gib: 1 }, steps: [], runSeconds: 60 }, TOKYO)).toThrow(UsageError);
    expect(() =>
      computePlan({ input: { gib: 1 }, steps: [parseStep('x:write=1,time=2h')], runSeconds: 60 }, TOKYO),
    ).toThrow(/more than the run time/);
  });
});

describe('plan inputs', () => {
  it('parses sizes, durations and bit rates', () => {
    expect(parseBytes('256MiB')).toBe(256 * 1024 ** 2);
    expect(parseBytes('40GB')).toBe(40e9);
    expect(parseDuration('54:59')).toBe(3299);
    expect(parseDuration('1h30m')).toBe(5400);
    expect(parseDuration('54m59s')).toBe(3299);
    expect(parseDuration('1:02:03')).toBe(3723);
    expect(parseMbps('128kbps')).toBeCloseTo(0.128, 9);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
  });

  it('parses steps with multiples, bit rates, sizes and times', () => {
    expect(parseStep('enc:read=2,write=5Mbps,time=17m17s')).toEqual({
      name: 'enc',
      read: { kind: 'input', multiple: 2 },
      write: { kind: 'rate', mbps: 5 },
      seconds: 1037,
    });
    expect(parseStep('x:write=1.5GiB').write).toEqual({ kind: 'size', gib: 1.5 });
    expect(() => parseStep('noname')).toThrow(/NAME:read/);
    expect(() => parseStep('x:speed=3')).toThrow(/unknown key/);
  });

  it('fills the third of size, duration and bit rate', () => {
    const fromRate = resolveInput({ durationSeconds: 1800, bitrateMbps: 147 });
    expect(fromRate.gib).toBeCloseTo((147e6 * 1800) / 8 / 1024 ** 3, 9);
    expect(resolveInput({ gib: fromRate.gib, bitrateMbps: 147 }).durationSeconds).toBeCloseTo(1800, 6);
    expect(() => resolveInput({ durationSeconds: 60 })).toThrow(/--input-size/);
  });

  it('overrides built-in prices and refuses unknown keys and regions', () => {
    const p = resolvePrices({ region: 'us-east-1', overrides: ['ebsGp3StorageGbMonth=0.1'] });
    expect(p.ebsGp3StorageGbMonth).toBe(0.1);
    expect(p.sources.at(-1)).toBe('--price ebsGp3StorageGbMonth=0.1');
    expect(BUILT_IN_PRICES['us-east-1'].ebsGp3StorageGbMonth).toBe(0.08);
    expect(() => resolvePrices({ region: 'us-east-1', overrides: ['cheap=1'] })).toThrow(/KEY=NUMBER/);
    expect(() => resolvePrices({ region: 'mars-1' })).toThrow(/--prices FILE/);
  });
});
