/**
 * The credit guard's arithmetic without AWS: the credit left, the spend rate, the projection, which warning
 * is due, how long the job should still run, and what the check publishes and reports.
 */
import {
  cloudWatchTotals,
  creditMetrics,
  creditOutlook,
  estimateCredit,
  expectedTimeLeft,
  spendRate,
  thresholdToWarn,
} from '../../../core/credit/guard';
import type { CreditReadings } from '../../../core/credit/readings';
import { NfsMeter } from '../../../core/credit/nfs-meter';

/** A meter that saw `written` bytes (metered in full) at each of the times given. */
function meter(samples: readonly (readonly [at: number, written: number])[]): NfsMeter {
  let written = 0;
  const nfs = new NfsMeter(() => ({ serverReadBytes: 0, serverWriteBytes: written }));
  for (const [at, bytes] of samples) {
    written = bytes;
    nfs.sample(at);
  }
  return nfs;
}

const readings = (r: Partial<CreditReadings>): CreditReadings => ({
  balance: [],
  percentIoLimit: [],
  meteredIo: [],
  ...r,
});

describe('estimateCredit', () => {
  it('takes the last balance less what the NFS counters saw after its minute', () => {
    const balance = [
      { at: 0, value: 1000 },
      { at: 60_000, value: 800 },
    ];
    // The datapoint at 60 s covers the minute up to 120 s; 90 bytes moved after that.
    const nfs = meter([
      [120_000, 10],
      [180_000, 100],
    ]);
    expect(estimateCredit(balance, nfs, 5000, 0)).toEqual({ startCredit: 1000, left: 710 });
    expect(estimateCredit(balance, meter([]), undefined, 0)).toEqual({ startCredit: 1000, left: 800 });
  });

  it('counts down from the starting credit before CloudWatch has a datapoint, and is blind without either', () => {
    const nfs = meter([
      [0, 0],
      [10_000, 400],
    ]);
    expect(estimateCredit([], nfs, 1000, 0)).toEqual({ startCredit: 1000, left: 600 });
    expect(estimateCredit([], nfs, undefined, 0)).toBeUndefined();
    expect(estimateCredit([], meter([]), 1000, 0)).toBeUndefined();
  });
});

describe('spendRate', () => {
  // A steep first minute, then 600 bytes a minute.
  const balance = [0, 1, 2, 3, 4, 5].map((m) => ({
    at: m * 60_000,
    value: m === 0 ? 20_000 : 10_000 - 600 * m,
  }));

  it('prefers the NFS counters, then the slope of the last five balances, then the last metered minute', () => {
    const nfs = meter([
      [0, 0],
      [10_000, 500],
    ]);
    expect(spendRate(nfs, readings({ balance }))).toBe(50);
    // 2400 in 4 minutes: the steep first minute is not among the last five.
    expect(spendRate(meter([]), readings({ balance }))).toBe(10);
    expect(spendRate(meter([]), readings({ meteredIo: [{ at: 0, value: 1200 }] }))).toBe(20);
    expect(spendRate(meter([]), undefined)).toBe(0);
  });

  it('is never negative while the balance grows', () => {
    const growing = balance.map((d) => ({ ...d, value: 30_000 - d.value }));
    expect(spendRate(meter([]), readings({ balance: growing }))).toBe(0);
  });
});

describe('creditOutlook', () => {
  it('bounds the fraction spent to 0..1 and projects only while credit is being spent', () => {
    expect(creditOutlook({ startCredit: 1000, left: 250 }, 5, 0)).toMatchObject({
      spentFraction: 0.75,
      secondsLeft: 50,
    });
    expect(creditOutlook({ startCredit: 1000, left: -100 }, 5, 0)).toMatchObject({
      spentFraction: 1,
      secondsLeft: 0,
    });
    expect(creditOutlook({ startCredit: 1000, left: 1200 }, 0, 0)).toMatchObject({
      spentFraction: 0,
      secondsLeft: undefined,
    });
  });
});

describe('thresholdToWarn', () => {
  it('names the highest threshold reached that was not warned of yet', () => {
    expect(thresholdToWarn(0.49, new Set())).toBeUndefined();
    expect(thresholdToWarn(0.5, new Set())).toBe(0.5);
    expect(thresholdToWarn(0.85, new Set())).toBe(0.8);
    expect(thresholdToWarn(0.85, new Set([0.5, 0.8]))).toBeUndefined();
    expect(thresholdToWarn(0.96, new Set([0.5]))).toBe(0.95);
  });
});

describe('expectedTimeLeft', () => {
  it('takes --expected-duration first, else --expected-io at the current rate', () => {
    const both = { expectedDurationSeconds: 3600, expectedIoBytes: 1000 };
    expect(expectedTimeLeft(both, 600, 0, 1)).toEqual({ seconds: 3000, from: '--expected-duration' });
    expect(expectedTimeLeft({ expectedIoBytes: 1000 }, 600, 400, 10)).toEqual({
      seconds: 60,
      from: '--expected-io',
    });
    expect(expectedTimeLeft({ expectedIoBytes: 1000 }, 600, 1400, 10)).toMatchObject({ seconds: 0 });
    expect(expectedTimeLeft({ expectedIoBytes: 1000 }, 600, 400, 0)).toBeUndefined();
    expect(expectedTimeLeft({}, 600, 400, 10)).toBeUndefined();
  });
});

describe('creditMetrics and cloudWatchTotals', () => {
  it('publishes the percent to a tenth and the minutes left only while credit is being spent', () => {
    const spending = creditOutlook({ startCredit: 3000, left: 1000 }, 1, 0);
    expect(creditMetrics(spending, 1)).toEqual({
      creditUsedPercent: 66.7,
      minutesToExhaustion: 17,
      modeSwitches: 1,
    });
    const idle = creditOutlook({ startCredit: 3000, left: 1000 }, 0, 0);
    expect(creditMetrics(idle, 0)).toEqual({ creditUsedPercent: 66.7, modeSwitches: 0 });
  });

  it('reports sums and extremes of what CloudWatch showed, null for what it never showed', () => {
    expect(cloudWatchTotals(undefined)).toEqual({
      meteredIoBytes: null,
      burstCreditUsedBytes: null,
      minBurstCreditBalanceBytes: null,
      maxPercentIoLimit: null,
    });
    const shown = readings({
      balance: [
        { at: 0, value: 1000 },
        { at: 60_000, value: 400 },
        { at: 120_000, value: 700 },
      ],
      percentIoLimit: [
        { at: 0, value: 20 },
        { at: 60_000, value: 35 },
      ],
      meteredIo: [
        { at: 0, value: 600 },
        { at: 60_000, value: 300.4 },
      ],
    });
    expect(cloudWatchTotals(shown)).toEqual({
      meteredIoBytes: 900,
      burstCreditUsedBytes: 300,
      minBurstCreditBalanceBytes: 400,
      maxPercentIoLimit: 35,
    });
  });
});
