/**
 * The dashboard's scratch burst-credit guard widgets: what the guard of the fleet's running scratch jobs
 * publishes (core/credit/metric.ts, embedded-metric-format lines in the agent metrics log).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SCRATCH_GUARD_METRICS, SCRATCH_METRICS_NAMESPACE } from '../../core/contract';

/** Credit used and switches to Elastic; minutes until the soonest exhaustion. */
export function creditGuardWidgets(fleetId: string): cloudwatch.IWidget[] {
  const period = Duration.minutes(1);
  const metric = (metricName: string, statistic: string, label: string) =>
    new cloudwatch.Metric({
      namespace: SCRATCH_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { FleetId: fleetId },
      statistic,
      label,
      period,
    });
  return [
    new cloudwatch.GraphWidget({
      title: 'Scratch jobs: burst credit used (%, the most spent) and switches to Elastic',
      left: [metric(SCRATCH_GUARD_METRICS.creditUsedPercent, 'Maximum', 'credit used (%)')],
      right: [metric(SCRATCH_GUARD_METRICS.modeSwitches, 'Sum', 'switches to Elastic')],
      leftYAxis: { min: 0, max: 100 },
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Scratch jobs: projected minutes until the burst credit runs out (the soonest)',
      left: [metric(SCRATCH_GUARD_METRICS.minutesToExhaustion, 'Minimum', 'minutes to exhaustion')],
      width: 12,
    }),
  ];
}
