/**
 * Metrics as a user finds them on AWS: Mountpoint's OTLP export, the agent's Express-switch lines and the
 * reaper's decisions go through the CloudWatch agent stand-in into the emulator's CloudWatch; the report
 * lists what arrived, and the dashboard the deploy created that shows them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { CloudWatchClient, ListDashboardsCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { clientConfig } from '../../core/aws/clients';
import { OTLP_ENDPOINT } from '../../core/contract/metric-names';
import { physicalIds } from '../../test/support/cloudformation-gaps-standin';
import { CloudWatchAgentStandIn, type MetricCounts } from '../../test/support/cloudwatch-agent-standin';

export interface MetricsReport {
  /** Whether Mountpoint's OTLP export could be received (its port may be taken on a shared machine). */
  readonly otlpReceiving: boolean;
  readonly otlpNotReceivingBecause?: string;
  /** Datapoints written by the stand-in, by namespace and metric name. */
  readonly datapoints: MetricCounts;
  /** Metric names the emulator's CloudWatch lists, by namespace (ListMetrics). */
  readonly listed: Record<string, string[]>;
  /** The deployed dashboard(s): CloudWatch → Dashboards on AWS. */
  readonly dashboards: string[];
  /** The stack's log groups (the agent's embedded metrics, the reaper's log): CloudWatch → Log groups. */
  readonly logGroups: string[];
  readonly errors: string[];
}

/** Starts the CloudWatch agent stand-in where the agent points Mountpoint's OTLP export. */
export function startCloudWatchAgent(autoScalingGroupName: string): Promise<CloudWatchAgentStandIn> {
  return CloudWatchAgentStandIn.start(OTLP_ENDPOINT, autoScalingGroupName);
}

/** Ships embedded-metric-format log files (what CloudWatch Logs extracts metrics from on AWS). */
export function shipEmfFiles(agent: CloudWatchAgentStandIn, files: readonly string[]): void {
  for (const f of files) if (existsSync(f)) agent.putEmf(readFileSync(f, 'utf8'));
}

export async function metricsReport(agent: CloudWatchAgentStandIn, stack: string): Promise<MetricsReport> {
  await agent.flushed();
  const cloudwatch = new CloudWatchClient(clientConfig());
  const listed: Record<string, string[]> = {};
  for (const namespace of Object.keys(agent.datapoints())) {
    const metrics = (await cloudwatch.send(new ListMetricsCommand({ Namespace: namespace }))).Metrics ?? [];
    listed[namespace] = [...new Set(metrics.map((m) => m.MetricName!))].sort();
  }
  const dashboards = (await cloudwatch.send(new ListDashboardsCommand({}))).DashboardEntries ?? [];
  return {
    otlpReceiving: agent.receiving,
    ...(agent.notReceiving ? { otlpNotReceivingBecause: agent.notReceiving } : {}),
    datapoints: agent.datapoints(),
    listed,
    dashboards: dashboards.map((d) => d.DashboardName!),
    logGroups: [...(await physicalIds(stack))]
      .filter(([logical]) => /LogGroup[0-9A-F]{8}$/.test(logical))
      .map(([, name]) => name)
      .sort(),
    errors: [...agent.errors],
  };
}
