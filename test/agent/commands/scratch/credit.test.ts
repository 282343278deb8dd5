/**
 * `scratch run`'s burst-credit guard through the real bundle: credit datapoints scripted into the emulator's
 * CloudWatch for the run's own file system while its job runs, the warning and the stop on stderr, the
 * summary file and the last stderr line, and the guard's metric lines in the agent metrics log.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { cloudWatchClient } from '../../../../core/aws/clients';
import { SCRATCH_METRICS_NAMESPACE } from '../../../../core/contract/metric-names';
import { TIB } from '../../../../core/common/units';
import { runSummarySchema } from '../../../../core/credit/run-summary';
import { fileSystemsOf, job, leftovers, NOTHING_LEFT, useScratchRuns, waitUntil } from './harness';

jest.setTimeout(60_000);

/** Two BurstCreditBalance datapoints in the guard's window: the start, and `left` of it a minute later. */
async function scriptCredit(fileSystemId: string, leftFraction: number) {
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const Dimensions = [{ Name: 'FileSystemId', Value: fileSystemId }];
  const start = 2.1 * TIB;
  await cloudWatchClient({ maxAttempts: 1 }).send(
    new PutMetricDataCommand({
      Namespace: 'AWS/EFS',
      MetricData: [
        { MetricName: 'BurstCreditBalance', Dimensions, Timestamp: new Date(minute - 60_000), Value: start },
        {
          MetricName: 'BurstCreditBalance',
          Dimensions,
          Timestamp: new Date(minute),
          Value: start * leftFraction,
        },
        {
          MetricName: 'MeteredIOBytes',
          Dimensions,
          Timestamp: new Date(minute),
          Value: start * (1 - leftFraction),
        },
        { MetricName: 'PercentIOLimit', Dimensions, Timestamp: new Date(minute), Value: 97 },
      ],
    }),
  );
}

describe('mountfleet scratch run: the burst-credit guard', () => {
  const scratch = useScratchRuns(2);
  let systemRoot: string;
  beforeEach(() => {
    systemRoot = mkdtempSync(join(tmpdir(), 'mf-credit-root-'));
  });
  afterEach(() => rmSync(systemRoot, { recursive: true, force: true }));

  const waitForFileSystem = async (jobId: string) => {
    for (;;) {
      const [fs] = await fileSystemsOf(jobId);
      if (fs) return fs.FileSystemId!;
      await new Promise((r) => setImmediate(r));
    }
  };

  it('warns while the job runs, writes the summary (file and last stderr line) and the metrics; `stop` ends the job', async () => {
    const [warned, stopped] = await Promise.all([
      scratch.start({
        job: 'credit-warn',
        command: job('echo running; while [ ! -e "$TEST_DIR/go" ]; do sleep 0.05; done'),
        extraArgs: ['--credit-check-interval', '10', '--expected-io', '1TiB', '--summary', 'summary.json'],
        env: { MOUNTFLEET_SYSTEM_ROOT: systemRoot },
      }),
      scratch.start({
        job: 'credit-stop',
        command: job('echo running; sleep 120'),
        extraArgs: ['--credit-check-interval', '10', '--on-credit-low', 'stop'],
        env: { MOUNTFLEET_SYSTEM_ROOT: systemRoot },
      }),
    ]);
    await Promise.all([warned.waitFor(/^running$/m), stopped.waitFor(/^running$/m)]);
    await scriptCredit(await waitForFileSystem('credit-warn'), 0.15); // 85 % spent
    await scriptCredit(await waitForFileSystem('credit-stop'), 0.05); // 95 % spent

    await warned.waitFor(/credit guard: 80 % of the burst credit spent/, 30_000);
    writeFileSync(join(warned.dir, 'go'), '');
    expect((await warned.exited).code).toBe(0);
    expect(warned.stderr()).toMatch(
      /credit guard: 80 % of the burst credit spent on fs-\w+ \(0\.3\d TiB of 2\.10 TiB left, .*What to do: --on-credit-low elastic switches/,
    );
    const summary = runSummarySchema.parse(
      JSON.parse(readFileSync(join(warned.dir, 'summary.json'), 'utf8')),
    );
    expect(summary).toMatchObject({
      jobId: 'credit-warn',
      exitStatus: 0,
      meteredIoBytes: Math.round(0.85 * 2.1 * TIB),
      burstCreditUsedBytes: Math.round(0.85 * 2.1 * TIB),
      minBurstCreditBalanceBytes: Math.round(0.15 * 2.1 * TIB),
      maxPercentIoLimit: 97,
      nfsMeteredBytes: null, // the stand-in mount is a tmpfs: no NFS counters
      expectedIoBytes: TIB,
    });
    expect(summary.fileSystemId).toMatch(/^fs-/);
    expect(summary.creditChecks).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(warned.stderr().trimEnd().split('\n').at(-1)!)).toEqual(summary);

    expect((await stopped.exited).code).toBe(143);
    expect(stopped.stderr()).toMatch(/stopping the job \(--on-credit-low stop\) rather than let it crawl/);
    expect(stopped.stderr()).toMatch(/passing SIGTERM to the job/);
    expect(JSON.parse(stopped.stderr().trimEnd().split('\n').at(-1)!)).toMatchObject({
      jobId: 'credit-stop',
      exitStatus: 143,
    });

    const metricLines = readFileSync(join(systemRoot, 'var/log/mountfleet/metrics.log'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Namespace: string }[] } },
      );
    expect(metricLines.length).toBeGreaterThanOrEqual(2);
    for (const line of metricLines) {
      expect(line._aws.CloudWatchMetrics[0].Namespace).toBe(SCRATCH_METRICS_NAMESPACE);
      expect(line.FleetId).toBe('scratch-it');
    }
    expect(metricLines.map((l) => l.BurstCreditUsedPercent)).toEqual(expect.arrayContaining([85, 95]));
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('`--on-credit-low elastic` that EFS keeps refusing: tried at every check, the job ends as it would, and the summary says the switch never happened', async () => {
    const run = await scratch.start({
      job: 'credit-elastic',
      command: job('echo running; while [ ! -e "$TEST_DIR/go" ]; do sleep 0.05; done'),
      extraArgs: ['--credit-check-interval', '10', '--on-credit-low', 'elastic', '--summary', 'summary.json'],
      env: { MOUNTFLEET_SYSTEM_ROOT: systemRoot },
      // UpdateFileSystem (which moto lacks) answered "not available" every time: the SDK does not retry a 409.
      faults: (proxy) =>
        proxy.addRule({
          service: 'efs',
          operation: 'UpdateFileSystem',
          fault: { kind: 'error', status: 409, code: 'IncorrectFileSystemLifeCycleState' },
        }),
    });
    await run.waitFor(/^running$/m);
    await scriptCredit(await waitForFileSystem('credit-elastic'), 0.05); // 95 % spent
    await run.waitFor(
      /could not switch fs-\w+ to Elastic throughput \(IncorrectFileSystemLifeCycleState/,
      30_000,
    );
    await waitUntil(
      () => run.proxy.count('efs', 'UpdateFileSystem') >= 2,
      'the next check to try again',
      30_000,
    );
    writeFileSync(join(run.dir, 'go'), '');
    expect((await run.exited).code).toBe(0);

    const attempts = run.proxy.count('efs', 'UpdateFileSystem');
    expect(run.stderr().match(/could not switch/g)).toHaveLength(1); // said once, tried at every check
    const summary = runSummarySchema.parse(JSON.parse(readFileSync(join(run.dir, 'summary.json'), 'utf8')));
    expect(summary).toMatchObject({ jobId: 'credit-elastic', exitStatus: 0 });
    expect(summary.throughputModeSwitchedAt).toBeUndefined();
    expect(summary.throughputModeSwitchFailed).toMatch(
      new RegExp(`^${attempts} attempt\\(s\\), the last failed with IncorrectFileSystemLifeCycleState`),
    );
    expect(run.stderr()).toContain(
      `credit guard: the job ended without the switch to Elastic throughput (--on-credit-low elastic): ${summary.throughputModeSwitchFailed}`,
    );
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  }, 90_000);

  it('refuses bad guard flags with exit 2, naming the flag, before touching AWS', async () => {
    const runs = await Promise.all(
      [
        ['--credit-check-interval', '5'],
        ['--on-credit-low', 'pause'],
        ['--expected-duration', 'soon'],
        ['--summary', '/nonexistent-dir/summary.json'],
      ].map((extraArgs, i) => scratch.start({ job: `bad-flag-${i}`, command: job('true'), extraArgs })),
    );
    const outcomes = await Promise.all(
      runs.map(async (r) => ({ code: (await r.exited).code, stderr: r.stderr() })),
    );
    expect(outcomes.map((o) => o.code)).toEqual([2, 2, 2, 2]);
    expect(outcomes[0].stderr).toMatch(/--credit-check-interval/);
    expect(outcomes[1].stderr).toMatch(/--on-credit-low.*pause.*warn, elastic, stop/);
    expect(outcomes[2].stderr).toMatch(/--expected-duration.*"soon" is not a duration/);
    expect(outcomes[3].stderr).toContain(
      '--summary /nonexistent-dir/summary.json: /nonexistent-dir is not a directory: create it or give another path',
    );
    for (const r of runs) expect(r.proxy.stats().total.requests).toBe(0);
  });
});
