/** The credit guard's view as metrics: one embedded-metric-format line per check in the agent's metrics log. */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SCRATCH_GUARD_METRICS, SCRATCH_METRICS_NAMESPACE } from '../contract';

export interface CreditMetrics {
  /** Percent of the starting credit spent. */
  readonly creditUsedPercent: number;
  /** Projected minutes until the credit runs out at the current rate; absent while nothing is spent. */
  readonly minutesToExhaustion?: number;
  /** 1 in the check that switched the file system to Elastic throughput, else 0. */
  readonly modeSwitches: number;
}

/**
 * Appends one line; the CloudWatch agent ships the file to the fleet's metrics log group, where CloudWatch
 * Logs turns it into metrics. One short line per append, so lines of concurrent runs do not interleave.
 */
export function appendCreditMetrics(
  file: string,
  fleetId: string,
  metrics: CreditMetrics,
  now: number,
): void {
  mkdirSync(dirname(file), { recursive: true });
  const names = SCRATCH_GUARD_METRICS;
  const line = {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: SCRATCH_METRICS_NAMESPACE,
          Dimensions: [['FleetId']],
          Metrics: [
            { Name: names.creditUsedPercent, Unit: 'Percent' },
            ...(metrics.minutesToExhaustion === undefined
              ? []
              : [{ Name: names.minutesToExhaustion, Unit: 'None' }]),
            { Name: names.modeSwitches, Unit: 'Count' },
          ],
        },
      ],
    },
    FleetId: fleetId,
    [names.creditUsedPercent]: metrics.creditUsedPercent,
    ...(metrics.minutesToExhaustion === undefined
      ? {}
      : { [names.minutesToExhaustion]: metrics.minutesToExhaustion }),
    [names.modeSwitches]: metrics.modeSwitches,
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}
