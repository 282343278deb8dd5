/**
 * The burst-credit guard against the emulator: credit datapoints scripted into moto's CloudWatch the way EFS
 * publishes them (per minute, arriving a few minutes late), GetMetricData throttled through the fault proxy,
 * and UpdateFileSystem answered by its stand-in (moto does not implement it). Time is a stepping clock: the
 * test lets one check interval pass at a time and waits until the guard sleeps again (its check done).
 */
import { PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { CreateFileSystemCommand } from '@aws-sdk/client-efs';
import { cloudWatchClient, efsClient } from '../../../core/aws';
import type { Clock } from '../../../core/clock';
import { steppingClock, type SteppingClock } from '../../support/stepping-clock';
import { GIB, MIB, TIB } from '../../../core/plan/units';
import type { CreditMetrics } from '../../../core/scratch/credit-metric';
import {
  INITIAL_CREDIT_BYTES,
  startCreditGuard,
  type CreditGuardOptions,
} from '../../../core/scratch/credit-guard';
import { standInForUpdateFileSystem } from '../../support/efs-update-standin';
import { useEmulator } from '../../support/emulator';
import { useFaultProxy } from '../../support/fault-proxy';

const MINUTE = 60_000;
/** CloudWatch shows an EFS datapoint this long after its minute ends. */
const LAG_MINUTES = 2;

describe('credit guard (emulator)', () => {
  const emu = useEmulator();
  const faults = useFaultProxy(emu, { services: ['cloudwatch', 'efs'] });
  let fileSystemId: string;
  let log: string[];
  let published: CreditMetrics[];
  let stops: number;
  // Minute-aligned, hours before the real time: moto keeps whatever timestamps it is given.
  const t0 = Math.floor(Date.now() / MINUTE) * MINUTE - 8 * 60 * MINUTE;

  beforeEach(async () => {
    const created = await efsClient({ maxAttempts: 1 }).send(
      new CreateFileSystemCommand({ CreationToken: `guard-${Date.now()}`, ThroughputMode: 'bursting' }),
    );
    fileSystemId = created.FileSystemId!;
    log = [];
    published = [];
    stops = 0;
  });

  const cloudwatch = cloudWatchClient({ maxAttempts: 1 });
  /** Publishes EFS's per-minute datapoints for minutes [from, to) of a job spending `bytesPerSecond`. */
  async function publishMinutes(
    from: number,
    to: number,
    bytesPerSecond: number,
    startBalance = INITIAL_CREDIT_BYTES,
  ) {
    const data: MetricDatum[] = [];
    for (let m = from; m < to; m++) {
      const Timestamp = new Date(t0 + m * MINUTE);
      const Dimensions = [{ Name: 'FileSystemId', Value: fileSystemId }];
      const balance = Math.max(0, startBalance - bytesPerSecond * 60 * m);
      data.push(
        { MetricName: 'BurstCreditBalance', Dimensions, Timestamp, Value: balance, Unit: 'Bytes' },
        { MetricName: 'PercentIOLimit', Dimensions, Timestamp, Value: 20 + (m % 7), Unit: 'Percent' },
        { MetricName: 'MeteredIOBytes', Dimensions, Timestamp, Value: bytesPerSecond * 60, Unit: 'Bytes' },
      );
    }
    for (let i = 0; i < data.length; i += 900) {
      await cloudwatch.send(
        new PutMetricDataCommand({ Namespace: 'AWS/EFS', MetricData: data.slice(i, i + 900) }),
      );
    }
  }

  const guardOptions = (clock: Clock, overrides: Partial<CreditGuardOptions> = {}): CreditGuardOptions => ({
    cloudwatch: cloudWatchClient({ maxAttempts: 1 }),
    efs: efsClient({ maxAttempts: 1 }),
    fileSystemId,
    intervalSeconds: 60,
    onCreditLow: 'warn',
    initialCreditBytes: INITIAL_CREDIT_BYTES,
    publish: (m) => published.push(m),
    stopJob: () => void stops++,
    clock,
    log: (line) => log.push(line),
    ...overrides,
  });

  /** Runs the guard for `minutes` one-minute checks while the job spends `rate`, datapoints arriving late. */
  async function runFor(clock: SteppingClock, minutes: number, rate: number, shown = 0) {
    for (let m = 1; m <= minutes; m++) {
      const visible = m - LAG_MINUTES;
      if (visible > shown) {
        await publishMinutes(shown, visible, rate);
        shown = visible;
      }
      await clock.step();
    }
    return shown;
  }

  it('warns once at 50 and 80 % with what is left, the rate and the time, switches to Elastic at 90 %, then warns no more', async () => {
    const standIn = await standInForUpdateFileSystem(
      faults.proxy,
      efsClient({ maxAttempts: 1 }),
      fileSystemId,
    );
    const clock = steppingClock(t0);
    const guard = startCreditGuard(
      guardOptions(clock, {
        onCreditLow: 'elastic',
        elasticPrices: { region: 'us-east-1', readPerGb: 0.03, writePerGb: 0.06 },
      }),
    );
    // 2 GiB/s: the 2.1 TiB run out after about 18 minutes.
    await runFor(clock, 22, 2 * GIB); // the 95 % datapoint is visible at the 21st check
    const report = await guard.stop();

    const warnings = log.filter((l) => /% of the burst credit spent/.test(l));
    expect(warnings.map((l) => /(\d+) % of the burst credit/.exec(l)![1])).toEqual(['50', '80']);
    expect(warnings[0]).toMatch(
      /^credit guard: 50 % of the burst credit spent on fs-\w+ \(\d\.\d\d TiB of 2\.10 TiB left, spending 2048\.0 MiB\/s\): runs out in about \d+ min \(at \d\d:\d\d UTC\); then throughput drops to the baseline .* What to do: the guard switches the file system to Elastic throughput at 90 %/,
    );
    // After the switch the credit no longer limits the job: no 95 % warning.
    expect(standIn.requests).toEqual([{ ThroughputMode: 'elastic' }]);
    expect(log.filter((l) => /switched .* to Elastic/.test(l))).toEqual([
      expect.stringMatching(/reads cost \$0\.03\/GB and writes \$0\.06\/GB .*only 24 h after this one$/),
    ]);
    expect(report.throughputModeSwitchedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(published.filter((m) => m.modeSwitches === 1)).toHaveLength(1);
    expect(published.at(-1)!.creditUsedPercent).toBeGreaterThanOrEqual(90);
    expect(report).toMatchObject({
      burstCreditUsedBytes: expect.any(Number),
      minBurstCreditBalanceBytes: expect.any(Number),
      maxPercentIoLimit: 26,
      nfsMeteredBytes: null,
      checks: 23, // one GetMetricData per check, and the last one after the job
    });
    // What CloudWatch had shown by then: 20 minutes at 2 GiB/s, the whole credit spent.
    expect(report.meteredIoBytes).toBe(20 * 60 * 2 * GIB);
    expect(report.burstCreditUsedBytes).toBe(Math.round(INITIAL_CREDIT_BYTES));
    expect(report.minBurstCreditBalanceBytes).toBe(0);
    expect(faults.proxy.count('cloudwatch', 'GetMetricData')).toBe(23);
  });

  it('says once that it is blind while a new file system has no datapoints, then watches', async () => {
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock));
    await clock.step();
    await clock.step();
    await clock.step();
    expect(log).toEqual([
      expect.stringMatching(
        /^credit guard is blind: CloudWatch has no BurstCreditBalance datapoints for fs-\w+ yet .*the job keeps running and the guard retries every 60 s$/,
      ),
    ]);
    expect(published).toEqual([]);
    // The datapoints arrive: 2 GiB/s from minute 0.
    await runFor(clock, 20, 2 * GIB, 0);
    await guard.stop();
    expect(log.filter((l) => /blind/.test(l))).toHaveLength(1);
    expect(log.some((l) => /^credit guard: 50 % of the burst credit spent/.test(l))).toBe(true);
    expect(published.at(-1)!.minutesToExhaustion).toBeGreaterThan(0);
  });

  it('rides out a throttled GetMetricData: says so once, keeps going, and stops the job at 90 % with `stop`', async () => {
    faults.proxy.addRule({
      service: 'cloudwatch',
      operation: 'GetMetricData',
      fault: { kind: 'throttle' },
      times: 4,
    });
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'stop' }));
    await runFor(clock, 20, 2 * GIB);
    await guard.stop();
    expect(log.filter((l) => /blind/.test(l))).toEqual([
      expect.stringMatching(/^credit guard is blind: GetMetricData failed \(Throttling: Rate exceeded\)/),
    ]);
    expect(faults.proxy.requests().filter((r) => r.outcome === 'throttle')).toHaveLength(4);
    expect(stops).toBe(1);
    expect(log.filter((l) => /stopping the job \(--on-credit-low stop\)/.test(l))).toHaveLength(1);
  });

  it('leaves the job on bursting when EFS refuses the switch (24 h rule), and does not try again', async () => {
    const standIn = await standInForUpdateFileSystem(
      faults.proxy,
      efsClient({ maxAttempts: 1 }),
      fileSystemId,
      {
        error: { status: 429, code: 'TooManyRequests' },
      },
    );
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'elastic' }));
    await runFor(clock, 22, 2 * GIB);
    const report = await guard.stop();
    expect(standIn.requests).toHaveLength(1);
    expect(log.filter((l) => /could not switch/.test(l))).toEqual([
      expect.stringMatching(/\(TooManyRequests: .*\); the job keeps running on bursting throughput$/),
    ]);
    expect(report.throughputModeSwitchedAt).toBeUndefined();
    expect(log.some((l) => /^credit guard: 95 % of the burst credit spent/.test(l))).toBe(true);
  });

  it('tries the switch again at the next check while the file system is not available', async () => {
    const busy = await standInForUpdateFileSystem(faults.proxy, efsClient({ maxAttempts: 1 }), fileSystemId, {
      error: { status: 409, code: 'IncorrectFileSystemLifeCycleState' },
      times: 1,
    });
    const ok = await standInForUpdateFileSystem(faults.proxy, efsClient({ maxAttempts: 1 }), fileSystemId);
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'elastic' }));
    await runFor(clock, 22, 2 * GIB);
    const report = await guard.stop();
    expect(busy.requests).toHaveLength(1);
    expect(ok.requests).toHaveLength(1);
    expect(report.throughputModeSwitchedAt).toBeDefined();
  });

  it('sees a fast job within one check from the NFS counters, before CloudWatch has a datapoint', async () => {
    let written = 0;
    const clock = steppingClock(t0);
    const guard = startCreditGuard(
      guardOptions(clock, {
        intervalSeconds: 10,
        readCounters: () => ({ serverReadBytes: 3 * TIB, serverWriteBytes: written }),
      }),
    );
    written = 1.1 * TIB; // within one 10 s interval
    await clock.step();
    await guard.stop();
    // Reads before the guard started do not count; 1.1 TiB written of 2.1 TiB is 52 %.
    expect(log).toEqual([
      expect.stringMatching(/^credit guard: 50 % of the burst credit spent .*, spending 115343\.4 MiB\/s\)/),
    ]);
    expect(published[0].creditUsedPercent).toBeCloseTo(52.4, 1);
    expect(faults.proxy.count('cloudwatch', 'GetMetricData')).toBe(2);
  });

  it('warns once when the credit would run out before the expected end, naming the flag', async () => {
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { expectedDurationSeconds: 3 * 3600 }));
    await runFor(clock, 8, 300 * MIB);
    await guard.stop();
    expect(log.filter((l) => /before the job's expected end/.test(l))).toEqual([
      expect.stringMatching(
        /^credit guard: at 300\.0 MiB\/s the burst credit of fs-\w+ \(2\.10 TiB left\) runs out in about 2 h \d+ min, before the job's expected end in about 2 h 5\d min \(--expected-duration\)/,
      ),
    ]);
  });
});
