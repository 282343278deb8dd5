/** The credit guard's view as metrics: one embedded-metric-format line per check in the agent's metrics log. */
import { appendEmfLine, type EmfMetric } from '../common';
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
 * Appends one line (core/common/emf.ts); the CloudWatch agent ships the file to the fleet's metrics log group,
 * where CloudWatch Logs turns it into metrics.
 */
export function appendCreditMetrics(
  file: string,
  fleetId: string,
  metrics: CreditMetrics,
  now: number,
): void {
  const names = SCRATCH_GUARD_METRICS;
  const values: EmfMetric[] = [
    { name: names.creditUsedPercent, unit: 'Percent', value: metrics.creditUsedPercent },
    ...(metrics.minutesToExhaustion === undefined
      ? []
      : [{ name: names.minutesToExhaustion, unit: 'None' as const, value: metrics.minutesToExhaustion }]),
    { name: names.modeSwitches, unit: 'Count', value: metrics.modeSwitches },
  ];
  appendEmfLine(file, {
    namespace: SCRATCH_METRICS_NAMESPACE,
    dimensions: { FleetId: fleetId },
    metrics: values,
    timestamp: now,
  });
}
