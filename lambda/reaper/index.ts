/**
 * The orphan reaper's Lambda entry point: a thin handler over core/reaper. EventBridge invokes it on a
 * schedule (full scan) and on EC2 interruption/termination events (fast path for that instance only).
 * Returns the report, logs one structured line per decision and publishes the counts as EMF metrics.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { REAPER_FLEET_DIMENSION, REAPER_METRICS_NAMESPACE, reaperSettingsFromEnv } from '../../core/contract';
import {
  lazyReaperClients,
  parseReaperEvent,
  reap,
  reportCounts,
  reportWithin,
  summarizeReport,
  type ReapReport,
} from '../../core/reaper';

// Created once per container: connections and the adaptive retry state carry over between invocations.
// The EC2 and tagging clients are built on first use (core/reaper/clients.ts): not every run needs them.
const clients = lazyReaperClients();
const logger = new Logger({ serviceName: 'mountfleet-reaper' });
const metrics = new Metrics({ namespace: REAPER_METRICS_NAMESPACE, serviceName: 'mountfleet-reaper' });
// Alarms key on exactly the fleet dimension: drop the `service` dimension Powertools adds by default.
metrics.clearDefaultDimensions();

export type ReaperResult = ReapReport | { readonly ignored: string };

/** Lambda's limit on a function's response (6 MB), less room for what the runtime wraps around it. */
const RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024 - 64 * 1024;

export async function handler(
  event: unknown,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<ReaperResult> {
  const settings = reaperSettingsFromEnv();
  const trigger = parseReaperEvent(event);
  if (trigger.kind === 'ignored') {
    logger.info('event ignored', { fleet: settings.fleetId, reason: trigger.reason });
    return { ignored: trigger.reason };
  }
  const report = await reap(clients, settings, {
    goneInstance: trigger.kind === 'instance-gone' ? trigger : undefined,
    remainingTimeMs: () => context.getRemainingTimeInMillis(),
    onDecision: (d) => logger.info('decision', { fleet: settings.fleetId, trigger: trigger.kind, ...d }),
  });
  metrics.addDimension(REAPER_FLEET_DIMENSION, settings.fleetId);
  for (const [name, value] of Object.entries(reportCounts(report)))
    metrics.addMetric(name, MetricUnit.Count, value);
  metrics.publishStoredMetrics();
  logger.info(summarizeReport(report), { fleet: settings.fleetId, trigger: trigger.kind });
  return reportWithin(report, RESPONSE_LIMIT_BYTES);
}
