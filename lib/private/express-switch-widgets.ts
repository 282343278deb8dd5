/**
 * The dashboard's Express cache switch widgets: how often the fleet's mounts moved between the Express cache
 * and a cache-less Mountpoint, and how long noticing and moving took. The agent writes these as
 * embedded-metric-format lines (core/agent/switch-metric.ts); each series is one mount and direction, so a
 * search draws every one seen.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import {
  EXPRESS_METRICS_NAMESPACE,
  EXPRESS_SWITCH_DIMENSIONS,
  EXPRESS_SWITCH_METRICS,
} from '../../core/contract';

const PERIOD = Duration.minutes(5);

/** Every series of one switch metric of the fleet, one per mount and direction, labelled with both. */
function switchSeries(fleetId: string, metricName: string, statistic: string, what: string) {
  const schema = [EXPRESS_METRICS_NAMESPACE, ...EXPRESS_SWITCH_DIMENSIONS].join(',');
  return new cloudwatch.MathExpression({
    expression: `SEARCH('{${schema}} MetricName="${metricName}" FleetId="${fleetId}"', '${statistic}', ${PERIOD.toSeconds()})`,
    usingMetrics: {},
    // A dynamic label: each series shows its own mount and direction, not the expression.
    label: `${what} \${PROP('Dim.Mount')} \${PROP('Dim.Direction')}`,
    period: PERIOD,
  });
}

/** Switch counts, and the longest detection and switch times, of the fleet's mounts. */
export function expressSwitchWidgets(fleetId: string): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Express cache switches (per mount and direction)',
      left: [switchSeries(fleetId, EXPRESS_SWITCH_METRICS.switches, 'Sum', 'switches')],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Express cache switch: detection and switch time (ms, longest)',
      left: [
        switchSeries(fleetId, EXPRESS_SWITCH_METRICS.detectionTime, 'Maximum', 'detection'),
        switchSeries(fleetId, EXPRESS_SWITCH_METRICS.switchTime, 'Maximum', 'switch'),
      ],
      width: 12,
    }),
  ];
}
