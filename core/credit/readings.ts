/**
 * What CloudWatch says of one scratch file system's burst credit: one GetMetricData call per check, three
 * metrics (`BurstCreditBalance` Minimum, `PercentIOLimit` Maximum, `MeteredIOBytes` Sum, per minute) over
 * the whole run so far. Re-reading the window each time picks up datapoints that arrived late; the price
 * is per metric requested (3 a call), not per datapoint.
 */
import {
  GetMetricDataCommand,
  type CloudWatchClient,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';

export interface Datapoint {
  /** Start of the minute the datapoint covers (ms since the epoch). */
  readonly at: number;
  readonly value: number;
}

export interface CreditReadings {
  readonly balance: readonly Datapoint[];
  readonly percentIoLimit: readonly Datapoint[];
  readonly meteredIo: readonly Datapoint[];
}

/** EFS publishes these per minute. */
export const EFS_METRIC_PERIOD_SECONDS = 60;
/** Metrics requested per call: what an hour of checks costs is calls × this. */
export const METRICS_PER_CHECK = 3;
/** Pages followed per check (a page holds 100,800 datapoints: about 23 days of three per-minute series). */
const MAX_PAGES = 3;

const query = (id: keyof CreditReadings, metricName: string, stat: string, fileSystemId: string) =>
  ({
    Id: id,
    MetricStat: {
      Metric: {
        Namespace: 'AWS/EFS',
        MetricName: metricName,
        Dimensions: [{ Name: 'FileSystemId', Value: fileSystemId }],
      },
      Period: EFS_METRIC_PERIOD_SECONDS,
      Stat: stat,
    },
    ReturnData: true,
  }) satisfies MetricDataQuery;

/** The three series between `from` and `to` (ms), oldest first; empty series while EFS has published none. */
export async function readCredit(
  cloudwatch: CloudWatchClient,
  fileSystemId: string,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<CreditReadings> {
  const series: Record<keyof CreditReadings, Datapoint[]> = {
    balance: [],
    percentIoLimit: [],
    meteredIo: [],
  };
  let nextToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await cloudwatch.send(
      new GetMetricDataCommand({
        StartTime: new Date(from),
        EndTime: new Date(to),
        ScanBy: 'TimestampAscending',
        NextToken: nextToken,
        MetricDataQueries: [
          query('balance', 'BurstCreditBalance', 'Minimum', fileSystemId),
          query('percentIoLimit', 'PercentIOLimit', 'Maximum', fileSystemId),
          query('meteredIo', 'MeteredIOBytes', 'Sum', fileSystemId),
        ],
      }),
      { abortSignal: signal },
    );
    for (const result of answer.MetricDataResults ?? []) {
      const target = series[result.Id as keyof CreditReadings];
      if (!target) continue;
      (result.Timestamps ?? []).forEach((t, i) => {
        const value = result.Values?.[i];
        if (value !== undefined) target.push({ at: t.getTime(), value });
      });
    }
    nextToken = answer.NextToken;
    if (!nextToken) break;
  }
  for (const s of Object.values(series)) s.sort((a, b) => a.at - b.at);
  return series;
}
