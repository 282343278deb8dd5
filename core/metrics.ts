/**
 * The metrics contract shared by the instance side (CloudWatch agent config, Mountpoint flags) and the
 * constructs (IAM, log group, dashboard): keep these stable, dashboards and alarms key on them.
 */

/** CloudWatch namespace of Mountpoint's OTLP metrics; the instance role may publish to this one only. */
export const MOUNTPOINT_METRICS_NAMESPACE = 'Mountfleet/Mountpoint';

/**
 * The only dimension the CloudWatch agent adds to Mountpoint's own (`fuse_request`, `s3_request`, …).
 * One value per fleet keeps the number of billed custom metrics independent of how many instances
 * come and go; an `InstanceId` would multiply it by every instance that ever ran.
 */
export const MOUNTPOINT_FLEET_DIMENSION = 'AutoScalingGroupName';

/**
 * Mountpoint's `--otlp-export-interval`: it sends nothing at exit, so a stop loses at most this much of
 * each mount's metrics (its default, 60 s, would lose a minute). The agent batches what it receives into
 * one PutMetricData call per flush (up to 1,000 datapoints): more datapoints, not more calls, while they fit.
 */
export const OTLP_EXPORT_INTERVAL_SECONDS = 10;

/** The CloudWatch agent's `force_flush_interval`: how often it calls PutMetricData (batched). */
export const CLOUDWATCH_AGENT_FLUSH_SECONDS = 60;

/** The log group that receives the agent's embedded-metric-format lines (Express cache switches). */
export function agentMetricsLogGroupName(fleetId: string): string {
  return `/mountfleet/${fleetId}/agent-metrics`;
}

/**
 * CloudWatch namespace of the scratch burst-credit guard's metrics (`scratch run`), published as
 * embedded-metric-format lines into the agent metrics log: CloudWatch Logs extracts them, no PutMetricData.
 */
export const SCRATCH_METRICS_NAMESPACE = 'Mountfleet/Scratch';

/** The guard's metric names (dimension `FleetId` only, so the count of billed metrics does not grow with jobs). */
export const SCRATCH_GUARD_METRICS = {
  creditUsedPercent: 'BurstCreditUsedPercent',
  minutesToExhaustion: 'MinutesToCreditExhaustion',
  modeSwitches: 'ThroughputModeSwitches',
} as const;
