/** The Express cache switch as a metric: one embedded-metric-format line per switch in the agent's metrics log. */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EXPRESS_METRICS_NAMESPACE, EXPRESS_SWITCH_DIMENSIONS, EXPRESS_SWITCH_METRICS } from '../contract';
import { type ProcessRole } from '../tuner';

/** One CloudWatch embedded-metric-format line per switch: the agent's log shipping turns it into a metric. */
export function appendMetric(
  file: string,
  fleetId: string,
  mount: string,
  to: ProcessRole,
  detectionMs: number,
  switchMs: number,
  now: number,
): void {
  mkdirSync(dirname(file), { recursive: true });
  const line = {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: EXPRESS_METRICS_NAMESPACE,
          Dimensions: [[...EXPRESS_SWITCH_DIMENSIONS]],
          Metrics: [
            { Name: EXPRESS_SWITCH_METRICS.switches, Unit: 'Count' },
            { Name: EXPRESS_SWITCH_METRICS.detectionTime, Unit: 'Milliseconds' },
            { Name: EXPRESS_SWITCH_METRICS.switchTime, Unit: 'Milliseconds' },
          ],
        },
      ],
    },
    FleetId: fleetId,
    Mount: mount,
    Direction: to === 'direct' ? 'to-direct' : 'to-express',
    [EXPRESS_SWITCH_METRICS.switches]: 1,
    [EXPRESS_SWITCH_METRICS.detectionTime]: detectionMs,
    [EXPRESS_SWITCH_METRICS.switchTime]: switchMs,
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}
