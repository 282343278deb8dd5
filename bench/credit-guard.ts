/**
 * Burst-credit guard benchmark: `npx tsx bench/credit-guard.ts [--rate-mib 100] [--lag-minutes 3]`.
 *
 * A synthetic job spends the credit of a new file system (2.1 TiB) at a steady metered rate until it runs
 * out. Its own moto (and a fault proxy that counts the calls) receives the per-minute AWS/EFS datapoints
 * a real file system would publish, each visible `--lag-minutes` after its minute ends; the guard runs on a
 * stepping clock with its default 60 s interval. Printed: when each warning came and how long before the
 * credit ran out (its lead time), with CloudWatch alone and with the NFS client's counters, and the calls
 * an hour of guard makes with what they cost.
 */
import { PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { CreateFileSystemCommand } from '@aws-sdk/client-efs';
import { parseArgs } from 'node:util';
import { cloudWatchClient, efsClient } from '../core/aws/clients';
import { formatWholeMinutes } from '../core/common/units';
import { MIB } from '../core/common/units';
import { DEFAULT_CREDIT_CHECK_SECONDS, startCreditGuard } from '../core/credit/guard';
import { INITIAL_CREDIT_BYTES } from '../core/credit/model';
import { METRICS_PER_CHECK } from '../core/credit/readings';
import { FaultProxy } from '../test/support/fault-proxy';
import { MotoServer } from '../test/support/moto';
import { steppingClock } from '../test/support/stepping-clock';

/** CloudWatch GetMetricData, USD per 1,000 metrics requested (us-east-1 list price; verify current prices). */
const GET_METRIC_DATA_USD_PER_1000_METRICS = 0.01;
const MINUTE = 60_000;

const { values } = parseArgs({
  options: {
    'rate-mib': { type: 'string', default: '100' },
    'lag-minutes': { type: 'string', default: '3' },
  },
});
const rate = Number(values['rate-mib']) * MIB;
const lagMinutes = Number(values['lag-minutes']);

interface Outcome {
  readonly warnings: Array<{ readonly what: string; readonly atSeconds: number }>;
  readonly calls: number;
  readonly checks: number;
}

async function scenario(proxy: FaultProxy, withNfsCounters: boolean): Promise<Outcome> {
  const cloudwatch = cloudWatchClient({ maxAttempts: 1 });
  const fileSystemId = (
    await efsClient({ maxAttempts: 1 }).send(
      new CreateFileSystemCommand({ CreationToken: `bench-${withNfsCounters}-${Date.now()}` }),
    )
  ).FileSystemId!;
  const t0 = Math.floor(Date.now() / MINUTE) * MINUTE - 12 * 60 * MINUTE;
  const clock = steppingClock(t0);
  const exhaustedAfter = INITIAL_CREDIT_BYTES / rate; // seconds
  const warnings: Outcome['warnings'] = [];
  const guard = startCreditGuard({
    cloudwatch,
    efs: efsClient({ maxAttempts: 1 }),
    fileSystemId,
    intervalSeconds: DEFAULT_CREDIT_CHECK_SECONDS,
    onCreditLow: 'warn',
    initialCreditBytes: INITIAL_CREDIT_BYTES,
    // The job is expected to run 8 hours: the credit lasts about 6 at 100 MiB/s.
    expectedDurationSeconds: 8 * 3600,
    readCounters: withNfsCounters
      ? () => ({
          serverReadBytes: 0,
          serverWriteBytes: Math.min((clock.now() - t0) / 1000, exhaustedAfter) * rate,
        })
      : undefined,
    stopJob: () => undefined,
    clock,
    log: (line) => {
      const what =
        /(\d+ %) of the burst credit spent/.exec(line)?.[1] ??
        (/expected end/.test(line) ? 'before the expected end' : undefined);
      if (what) warnings.push({ what, atSeconds: (clock.now() - t0) / 1000 });
    },
  });
  const before = proxy.count('cloudwatch', 'GetMetricData');
  let shown = 0;
  for (let minute = 1; minute * 60 <= exhaustedAfter + 120; minute++) {
    const visible = Math.max(0, minute - lagMinutes);
    const data: MetricDatum[] = [];
    for (let m = shown; m < visible; m++) {
      const Dimensions = [{ Name: 'FileSystemId', Value: fileSystemId }];
      const Timestamp = new Date(t0 + m * MINUTE);
      data.push(
        {
          MetricName: 'BurstCreditBalance',
          Dimensions,
          Timestamp,
          Value: Math.max(0, INITIAL_CREDIT_BYTES - rate * 60 * m),
        },
        { MetricName: 'MeteredIOBytes', Dimensions, Timestamp, Value: rate * 60 },
      );
    }
    if (data.length > 0)
      await cloudwatch.send(new PutMetricDataCommand({ Namespace: 'AWS/EFS', MetricData: data }));
    shown = visible;
    await clock.step();
  }
  const report = await guard.stop();
  return { warnings, calls: proxy.count('cloudwatch', 'GetMetricData') - before, checks: report.checks };
}

async function main() {
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const moto = await MotoServer.start();
  const proxy = await FaultProxy.start({ target: moto.endpoint });
  process.env.AWS_ENDPOINT_URL = proxy.endpoint;
  try {
    const exhaustedAfter = INITIAL_CREDIT_BYTES / rate;
    console.log(
      `A job spending ${values['rate-mib']} MiB/s (metered) from a new file system's 2.1 TiB: the credit runs out after ${formatWholeMinutes(exhaustedAfter)}; ` +
        `datapoints visible ${lagMinutes} min after their minute; checks every ${DEFAULT_CREDIT_CHECK_SECONDS} s; expected duration 8 h.\n`,
    );
    console.log('| source | warning | at | lead time before the credit runs out |');
    console.log('|---|---|---|---|');
    let perHour = 0;
    for (const withNfs of [false, true]) {
      const outcome = await scenario(proxy, withNfs);
      for (const w of outcome.warnings) {
        console.log(
          `| ${withNfs ? 'CloudWatch + NFS counters' : 'CloudWatch only'} | ${w.what} | ${formatWholeMinutes(w.atSeconds)} | ${formatWholeMinutes(exhaustedAfter - w.atSeconds)} |`,
        );
      }
      perHour = outcome.calls / ((exhaustedAfter + 120) / 3600);
    }
    const metricsPerHour = perHour * METRICS_PER_CHECK;
    console.log(
      `\nGetMetricData: ${perHour.toFixed(1)} calls per hour of job (one per check), ${metricsPerHour.toFixed(0)} metrics requested ` +
        `(${METRICS_PER_CHECK} a call) = $${((metricsPerHour / 1000) * GET_METRIC_DATA_USD_PER_1000_METRICS).toFixed(4)} per hour ` +
        `at $${GET_METRIC_DATA_USD_PER_1000_METRICS} per 1,000 metrics.`,
    );
  } finally {
    await proxy.stop();
    await moto.stop();
  }
}

void main();
