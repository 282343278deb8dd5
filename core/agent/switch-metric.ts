/** The Express cache switch as a metric: one embedded-metric-format line per switch in the agent's metrics log. */
import { appendEmfLine } from '../common';
import { EXPRESS_METRICS_NAMESPACE, EXPRESS_SWITCH_DIMENSIONS, EXPRESS_SWITCH_METRICS } from '../contract';
import { type ProcessRole } from '../tuner';

/** One line per switch (core/common/emf.ts): the CloudWatch agent ships it and CloudWatch makes it a metric. */
export function appendMetric(
  file: string,
  fleetId: string,
  mount: string,
  to: ProcessRole,
  detectionMs: number,
  switchMs: number,
  now: number,
): void {
  const dimensions = {
    FleetId: fleetId,
    Mount: mount,
    Direction: to === 'direct' ? 'to-direct' : 'to-express',
  } satisfies Record<(typeof EXPRESS_SWITCH_DIMENSIONS)[number], string>;
  appendEmfLine(file, {
    namespace: EXPRESS_METRICS_NAMESPACE,
    dimensions,
    metrics: [
      { name: EXPRESS_SWITCH_METRICS.switches, unit: 'Count', value: 1 },
      { name: EXPRESS_SWITCH_METRICS.detectionTime, unit: 'Milliseconds', value: detectionMs },
      { name: EXPRESS_SWITCH_METRICS.switchTime, unit: 'Milliseconds', value: switchMs },
    ],
    timestamp: now,
  });
}
