/**
 * The burst-credit guard against the emulator: credit datapoints scripted into moto's CloudWatch the way EFS
 * publishes them (per minute, arriving a few minutes late), GetMetricData throttled through the fault proxy,
 * and UpdateFileSystem answered by its stand-in (moto does not implement it). Time is a stepping clock: the
 * test lets one check interval pass at a time and waits until the guard sleeps again (its check done).
 */
import { PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { CreateFileSystemCommand } from '@aws-sdk/client-efs';
import { cloudWatchClient, efsClient } from '../../../core/aws/clients';
import type { Clock } from '../../../core/common/clock';
import { steppingClock, type SteppingClock } from '../../support/stepping-clock';
import { GIB, MIB, TIB } from '../../../core/common/units';
import type { CreditMetrics } from '../../../core/credit/metric';
import { startCreditGuard, type CreditGuardOptions } from '../../../core/credit/guard';
import { INITIAL_CREDIT_BYTES } from '../../../core/credit/model';
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

  it('leaves the job on bursting when EFS refuses the switch (24 h rule), and does not try again within 24 h', async () => {
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
      expect.stringMatching(
        /\(TooManyRequests: .*\): EFS allows .* only 24 h after its last change .*; trying again at \d{4}-\d\d-\d\dT\d\d:\d\d UTC \(24 h from now\) if the job still runs; the job keeps running on bursting throughput meanwhile$/,
      ),
    ]);
    expect(report.throughputModeSwitchedAt).toBeUndefined();
    expect(report.throughputModeSwitchFailed).toMatch(
      /^1 attempt\(s\), the last failed with TooManyRequests: .*24-hour rule, next try not before /,
    );
    expect(log.some((l) => /^credit guard: 95 % of the burst credit spent/.test(l))).toBe(true);
  });

  it('tries again 24 h after a TooManyRequests refusal, and switches then', async () => {
    const refused = await standInForUpdateFileSystem(
      faults.proxy,
      efsClient({ maxAttempts: 1 }),
      fileSystemId,
      { error: { status: 429, code: 'TooManyRequests' }, times: 1 },
    );
    const ok = await standInForUpdateFileSystem(faults.proxy, efsClient({ maxAttempts: 1 }), fileSystemId);
    let written = 0;
    const clock = steppingClock(t0);
    const guard = startCreditGuard(
      guardOptions(clock, {
        onCreditLow: 'elastic',
        intervalSeconds: 3600,
        // 2 of the 2.1 TiB written: 95 % spent by the NFS counters alone, CloudWatch has nothing.
        readCounters: () => ({ serverReadBytes: 0, serverWriteBytes: written }),
      }),
    );
    written = 2 * TIB;
    await clock.step(); // 1 h: refused
    expect(refused.requests).toHaveLength(1);
    for (let h = 2; h <= 24; h++) await clock.step(); // 24 h after the start: 23 h after the refusal
    expect(ok.requests).toHaveLength(0);
    await clock.step(); // 25 h: 24 h after the refusal
    const report = await guard.stop({ lastRead: false });
    expect(ok.requests).toEqual([{ ThroughputMode: 'elastic' }]);
    expect(report.throughputModeSwitchedAt).toBe(new Date(t0 + 25 * 3600_000).toISOString());
    expect(report.throughputModeSwitchFailed).toBeUndefined();
  });

  it('tries a throttled switch again at the next check, and switches then', async () => {
    // The SDK's own retries of the call are used up: what is left is the guard's next check.
    faults.proxy.addRule({
      service: 'efs',
      operation: 'UpdateFileSystem',
      fault: { kind: 'throttle' },
      times: 1,
    });
    const ok = await standInForUpdateFileSystem(faults.proxy, efsClient({ maxAttempts: 1 }), fileSystemId);
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'elastic' }));
    await runFor(clock, 22, 2 * GIB);
    const report = await guard.stop();

    expect(ok.requests).toEqual([{ ThroughputMode: 'elastic' }]);
    expect(report.throughputModeSwitchedAt).toBeDefined();
    expect(report.throughputModeSwitchFailed).toBeUndefined();
    // The retry is the very next check: one GetMetricData between the throttled call and the one that switched.
    const calls = faults.proxy
      .requests()
      .filter((r) => r.operation === 'UpdateFileSystem' || r.operation === 'GetMetricData');
    const throttled = calls.findIndex((r) => r.operation === 'UpdateFileSystem');
    expect(calls[throttled].outcome).toBe('throttle');
    expect(calls.slice(throttled + 1, throttled + 3).map((r) => [r.operation, r.outcome])).toEqual([
      ['GetMetricData', 'forwarded'],
      ['UpdateFileSystem', 'respond'],
    ]);
    expect(log.filter((l) => /could not switch|switched .* to Elastic/.test(l))).toEqual([
      expect.stringMatching(
        /^credit guard: could not switch fs-\w+ to Elastic throughput \(ThrottlingException: Rate exceeded\): EFS throttled the call; trying again at every check \(every 60 s\) until it is done; the job keeps running on bursting throughput meanwhile$/,
      ),
      expect.stringMatching(
        /^credit guard: switched fs-\w+ to Elastic throughput \(--on-credit-low elastic, attempt 2\)/,
      ),
    ]);
    expect(published.filter((m) => m.modeSwitches === 1)).toHaveLength(1);
  });

  it('keeps trying a switch that keeps failing, at every check, says so once, and the report says it never happened', async () => {
    const failing = await standInForUpdateFileSystem(
      faults.proxy,
      efsClient({ maxAttempts: 1 }),
      fileSystemId,
      { error: { status: 500, code: 'InternalServerError' } },
    );
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'elastic' }));
    await runFor(clock, 22, 2 * GIB);
    const report = await guard.stop();

    // From the check that first saw 90 % spent to the last one: every check tried.
    const tried = failing.requests.length;
    expect(tried).toBeGreaterThanOrEqual(3);
    const checksFrom90 = faults.proxy
      .requests()
      .filter((r) => r.operation === 'GetMetricData' || r.operation === 'UpdateFileSystem')
      .map((r) => r.operation)
      .join(' ')
      .split('UpdateFileSystem')
      .slice(1, -1);
    expect(checksFrom90.map((between) => between.trim())).toEqual(Array(tried - 1).fill('GetMetricData'));
    expect(log.filter((l) => /could not switch/.test(l))).toEqual([
      expect.stringMatching(/\(InternalServerError: .*\): an EFS server error; trying again at every check/),
    ]);
    expect(report.throughputModeSwitchedAt).toBeUndefined();
    expect(report.throughputModeSwitchFailed).toBe(
      `${tried} attempt(s), the last failed with InternalServerError: InternalServerError`,
    );
    expect(log.at(-1)).toBe(
      `credit guard: the job ended without the switch to Elastic throughput (--on-credit-low elastic): ${report.throughputModeSwitchFailed}; it ran on bursting throughput past 90 % of its credit`,
    );
  });

  it.each([
    ['BadRequest', 400, /EFS refuses the request itself/],
    ['FileSystemNotFound', 404, /the file system no longer exists/],
    ['ThroughputLimitExceeded', 400, /only a quota increase \(AWS Support\) lifts it/],
  ])(
    'does not try again when EFS says the change cannot be made (%s), and says why',
    async (code, status, why) => {
      const standIn = await standInForUpdateFileSystem(
        faults.proxy,
        efsClient({ maxAttempts: 1 }),
        fileSystemId,
        { error: { status, code } },
      );
      const clock = steppingClock(t0);
      const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'elastic' }));
      await runFor(clock, 22, 2 * GIB);
      const report = await guard.stop();
      expect(standIn.requests).toHaveLength(1);
      const said = log.filter((l) => /could not switch/.test(l));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        new RegExp(
          `\\(${code}: .*\\): .*; not trying again; the job keeps running on bursting throughput meanwhile$`,
        ),
      );
      expect(said[0]).toMatch(why);
      expect(report.throughputModeSwitchFailed).toMatch(
        new RegExp(`^1 attempt\\(s\\), the last failed with ${code}: `),
      );
      expect(report.throughputModeSwitchFailed).toMatch(why);
      // The guard goes on warning: the credit still limits the job.
      expect(log.some((l) => /^credit guard: 95 % of the burst credit spent/.test(l))).toBe(true);
    },
  );

  it('counts a switch whose answer was lost: the next check finds the file system on Elastic and does not ask again', async () => {
    faults.proxy.addRule({
      service: 'efs',
      operation: 'UpdateFileSystem',
      fault: { kind: 'reset' },
      times: 1,
    });
    // What EFS shows once the lost call has taken effect (moto keeps every file system on bursting).
    faults.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      match: (r) => r.query.get('FileSystemId') === fileSystemId,
      fault: {
        kind: 'rewrite',
        rewrite: (body) => body.replace(/"ThroughputMode":\s*"bursting"/g, '"ThroughputMode": "elastic"'),
      },
    });
    const clock = steppingClock(t0);
    const guard = startCreditGuard(guardOptions(clock, { onCreditLow: 'elastic' }));
    await runFor(clock, 22, 2 * GIB);
    const report = await guard.stop();
    expect(faults.proxy.count('efs', 'UpdateFileSystem')).toBe(1);
    expect(report.throughputModeSwitchedAt).toBeDefined();
    expect(log.filter((l) => /Elastic throughput/.test(l)).at(-1)).toMatch(
      /^credit guard: fs-\w+ is on Elastic throughput: an earlier attempt switched it/,
    );
    expect(published.filter((m) => m.modeSwitches === 1)).toHaveLength(1);
  });

  it('carries a mode switch whose metric line could not be written to the next line', async () => {
    await standInForUpdateFileSystem(faults.proxy, efsClient({ maxAttempts: 1 }), fileSystemId);
    let failed = 0;
    const clock = steppingClock(t0);
    const guard = startCreditGuard(
      guardOptions(clock, {
        onCreditLow: 'elastic',
        publish: (m) => {
          if (m.modeSwitches > 0 && failed++ === 0) throw new Error('ENOSPC: no space left on device');
          published.push(m);
        },
      }),
    );
    await runFor(clock, 22, 2 * GIB);
    await guard.stop();
    expect(failed).toBe(2);
    expect(published.filter((m) => m.modeSwitches === 1)).toHaveLength(1);
    expect(log.filter((l) => /cannot write its metrics/.test(l))).toEqual([
      expect.stringMatching(
        /^credit guard: cannot write its metrics \(ENOSPC: no space left on device\); trying again at every check/,
      ),
    ]);
  });

  it('asks for the stop again at the next check when asking failed', async () => {
    const clock = steppingClock(t0);
    const guard = startCreditGuard(
      guardOptions(clock, {
        onCreditLow: 'stop',
        stopJob: () => {
          if (++stops === 1) throw new Error('the run is not listening yet');
        },
      }),
    );
    await runFor(clock, 22, 2 * GIB);
    await guard.stop();
    expect(stops).toBe(2);
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
