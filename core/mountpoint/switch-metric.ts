/** The Express cache switch as a metric: one embedded-metric-format line per switch in the agent's metrics log. */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ProcessRole } from './tuning';

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
          Namespace: 'mountfleet',
          Dimensions: [['FleetId', 'Mount', 'Direction']],
          Metrics: [
            { Name: 'ExpressCacheSwitches', Unit: 'Count' },
            { Name: 'ExpressCacheDetectionTime', Unit: 'Milliseconds' },
            { Name: 'ExpressCacheSwitchTime', Unit: 'Milliseconds' },
          ],
        },
      ],
    },
    FleetId: fleetId,
    Mount: mount,
    Direction: to === 'direct' ? 'to-direct' : 'to-express',
    ExpressCacheSwitches: 1,
    ExpressCacheDetectionTime: detectionMs,
    ExpressCacheSwitchTime: switchMs,
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}
