/**
 * The metrics contract shared by the instance side (CloudWatch agent config, Mountpoint flags, the Express
 * switch metric), the reaper Lambda and the constructs (IAM, log group, alarms, dashboard): keep these stable,
 * dashboards and alarms key on them.
 */

/**
 * Every namespace mountfleet publishes to is `Mountfleet/<Part>`, one per part that publishes, so that
 * `aws cloudwatch list-metrics --namespace Mountfleet/…` and the console's namespace list show each part apart.
 */
function namespaceOf(part: string): string {
  return `Mountfleet/${part}`;
}

/**
 * CloudWatch namespace of Mountpoint's OTLP metrics, which the CloudWatch agent publishes with PutMetricData;
 * the instance role may publish to this one only.
 */
export const MOUNTPOINT_METRICS_NAMESPACE = namespaceOf('Mountpoint');

/**
 * CloudWatch namespace of the agent's Express cache switch metrics. They reach CloudWatch as embedded-metric-format
 * lines in the fleet's agent-metrics log group (CloudWatch Logs extracts them), not through PutMetricData.
 */
export const EXPRESS_METRICS_NAMESPACE = namespaceOf('Express');

/** The dimensions of every Express cache switch metric: the fleet, the mount path and `to-direct` or `to-express`. */
export const EXPRESS_SWITCH_DIMENSIONS = ['FleetId', 'Mount', 'Direction'] as const;

/** The Express cache switch metrics: one `Count` per switch, and how long detecting and switching took. */
export const EXPRESS_SWITCH_METRICS = {
  switches: 'ExpressCacheSwitches',
  detectionTime: 'ExpressCacheDetectionTime',
  switchTime: 'ExpressCacheSwitchTime',
} as const;

/** CloudWatch namespace of the orphan reaper's embedded-metric-format counts (Lambda). */
export const REAPER_METRICS_NAMESPACE = namespaceOf('Reaper');

/** The one dimension of the reaper's metrics; its value is the fleet id. Alarms key on exactly this one. */
export const REAPER_FLEET_DIMENSION = 'Fleet';

/** The counts a reaper run publishes, one metric each (unit Count): one per list of its report, and `Scanned`. */
export const REAPER_METRIC_NAMES = [
  'Scanned',
  'Deleted',
  'Marked',
  'Unmarked',
  'Kept',
  'Foreign',
  'Failed',
] as const;
export type ReaperMetricName = (typeof REAPER_METRIC_NAMES)[number];

/**
 * The only dimension the CloudWatch agent adds to Mountpoint's own (`fuse_request`, `s3_request`, …).
 * One value per fleet keeps the number of billed custom metrics independent of how many instances
 * come and go; an `InstanceId` would multiply it by every instance that ever ran.
 */
export const MOUNTPOINT_FLEET_DIMENSION = 'AutoScalingGroupName';

/** Where the local CloudWatch agent receives OTLP: the agent's metrics relay passes every export on to it. */
export const OTLP_ENDPOINT = 'http://127.0.0.1:4318';

/**
 * Where the agent's metrics relay listens (MOUNTFLEET_METRICS_RELAY moves it; port 0 takes any free one).
 * Each Mountpoint process exports to its own path there, so the agent can count S3 requests per mount;
 * the relay passes every export on to OTLP_ENDPOINT unchanged. When the port is taken, the agent has the
 * processes export to OTLP_ENDPOINT directly and counts nothing.
 */
export const METRICS_RELAY_ENDPOINT = 'http://127.0.0.1:4319';

/** One process's `--otlp-endpoint` on the relay; Mountpoint appends `/v1/metrics`. */
export function relayProcessEndpoint(relay: string, mountName: string, role: string): string {
  return `${relay}/mounts/${encodeURIComponent(mountName)}/${encodeURIComponent(role)}`;
}

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
export const SCRATCH_METRICS_NAMESPACE = namespaceOf('Scratch');

/** The guard's metric names (dimension `FleetId` only, so the count of billed metrics does not grow with jobs). */
export const SCRATCH_GUARD_METRICS = {
  creditUsedPercent: 'BurstCreditUsedPercent',
  minutesToExhaustion: 'MinutesToCreditExhaustion',
  modeSwitches: 'ThroughputModeSwitches',
} as const;
