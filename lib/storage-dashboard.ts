import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import {
  MOUNTPOINT_FLEET_DIMENSION,
  MOUNTPOINT_METRICS_NAMESPACE,
  REAPER_METRIC_NAMES,
} from '../core/contract';
import type { ComputeFleet } from './compute-fleet';
import type { IExpressCache } from './interfaces';
import type { OrphanReaper } from './orphan-reaper';
import { expressSwitchWidgets } from './private/express-switch-widgets';
import { creditGuardWidgets } from './private/credit-guard-widgets';
import { validateFleetId } from './private/validation';

/** Props of {@link StorageDashboard}. */
export interface StorageDashboardProps {
  /** The fleet id (title and reaper metrics). */
  readonly fleetId: string;
  /** The Express cache to chart per zone, with the fleet's switches to and from it. @default - no cache widgets */
  readonly expressCache?: IExpressCache;
  /** The reaper whose decisions to chart. @default - no reaper widgets */
  readonly reaper?: OrphanReaper;
  /** The fleet whose Mountpoint metrics to chart (cache hits, S3 and FUSE latency, S3 errors). @default - no Mountpoint widgets */
  readonly fleet?: ComputeFleet;
  /** The dashboard's name. @default - `mountfleet-<fleetId>-storage` */
  readonly dashboardName?: string;
}

/**
 * A CloudWatch dashboard for a fleet's storage: Express cache requests and errors per zone, the agent's Express
 * cache switches (count, detection and switch time), Mountpoint's
 * own metrics (cache hits, S3 and FUSE latency, S3 errors), scratch file systems alive (as the reaper
 * counts them), the lowest burst credit balance, what the burst-credit guard of running scratch jobs sees
 * (credit used, minutes to exhaustion, switches to Elastic throughput), and the reaper's decisions.
 */
export class StorageDashboard extends Construct {
  /** The CloudWatch dashboard. */
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: StorageDashboardProps) {
    super(scope, id);
    validateFleetId(this, props.fleetId);
    this.dashboard = new cloudwatch.Dashboard(this, 'Resource', {
      dashboardName: props.dashboardName ?? `mountfleet-${props.fleetId}-storage`,
      defaultInterval: Duration.hours(6),
    });
    const cache = props.expressCache;
    if (cache) {
      this.dashboard.addWidgets(
        new cloudwatch.GraphWidget({
          title: 'Express cache requests per zone',
          left: cache.azIds.map((azId) => cache.metric('AllRequests', azId, { label: azId })),
          width: 12,
        }),
        new cloudwatch.GraphWidget({
          title: 'Express cache errors per zone (4xx are mostly misses)',
          left: cache.azIds.map((azId) => cache.metric('5xxErrors', azId, { label: `${azId} 5xx` })),
          right: cache.azIds.map((azId) => cache.metric('4xxErrors', azId, { label: `${azId} 4xx` })),
          width: 12,
        }),
        ...expressSwitchWidgets(props.fleetId),
      );
    }
    if (props.fleet) this.dashboard.addWidgets(...mountpointWidgets(props.fleet));
    const reaper = props.reaper;
    const burst = new cloudwatch.GraphWidget({
      title: 'Lowest EFS burst credit balance (bytes, all file systems in the Region)',
      left: [
        new cloudwatch.MathExpression({
          expression: `MIN(SEARCH('{AWS/EFS,FileSystemId} MetricName="BurstCreditBalance"', 'Minimum', 300))`,
          usingMetrics: {},
          label: 'lowest BurstCreditBalance',
          period: Duration.minutes(5),
        }),
      ],
      width: 12,
    });
    if (reaper) {
      this.dashboard.addWidgets(
        new cloudwatch.GraphWidget({
          title: 'Scratch file systems alive (seen per reaper run)',
          left: [reaper.metricDecision('Scanned', { statistic: 'Maximum', label: 'file systems' })],
          width: 12,
        }),
        burst,
        ...creditGuardWidgets(props.fleetId),
        new cloudwatch.GraphWidget({
          title: 'Reaper decisions',
          left: REAPER_METRIC_NAMES.filter((n) => n !== 'Scanned').map((n) =>
            reaper.metricDecision(n, { label: n }),
          ),
          stacked: true,
          width: 24,
        }),
      );
    } else {
      this.dashboard.addWidgets(burst, ...creditGuardWidgets(props.fleetId));
    }
  }
}

/** Mountpoint's metrics of one fleet, as the CloudWatch agent names them (the OTLP names, unchanged). */
function mountpointWidgets(fleet: ComputeFleet): cloudwatch.IWidget[] {
  const period = Duration.minutes(5);
  const reads = fleet.metricMountpoint(
    'fuse.request_latency',
    { fuse_request: 'read' },
    { statistic: 'SampleCount', label: 'FUSE reads', period },
  );
  const hits = fleet.metricMountpoint(
    'experimental.fuse.cache_hit',
    {},
    { statistic: 'Sum', label: 'cache hits', period },
  );
  const latency = (metricName: string, dimensions: Record<string, string>, what: string) =>
    ['p50', 'p99'].map((statistic) =>
      fleet.metricMountpoint(metricName, dimensions, { statistic, label: `${what} ${statistic}`, period }),
    );
  // s3.request_errors has one series per request type and HTTP status: a search draws each one seen.
  const group = fleet.autoScalingGroup.autoScalingGroupName;
  const errorSchema = `${MOUNTPOINT_METRICS_NAMESPACE},${MOUNTPOINT_FLEET_DIMENSION},http_status,s3_request`;
  return [
    new cloudwatch.GraphWidget({
      title: 'Mountpoint reads served from a cache (local or Express)',
      left: [reads, hits],
      right: [
        new cloudwatch.MathExpression({
          expression: '100 * hits / reads',
          usingMetrics: { hits, reads },
          label: 'hit rate (%)',
          period,
        }),
      ],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Mountpoint S3 errors (by request and HTTP status)',
      left: [
        new cloudwatch.MathExpression({
          expression: `SEARCH('{${errorSchema}} MetricName="s3.request_errors" ${MOUNTPOINT_FLEET_DIMENSION}="${group}"', 'Sum', ${period.toSeconds()})`,
          usingMetrics: {},
          period,
        }),
      ],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Mountpoint S3 first-byte latency, GetObject (microseconds)',
      left: latency('s3.request_first_byte_latency', { s3_request: 'GetObject' }, 'GetObject'),
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Mountpoint FUSE read latency (microseconds)',
      left: latency('fuse.request_latency', { fuse_request: 'read' }, 'read'),
      width: 12,
    }),
  ];
}
