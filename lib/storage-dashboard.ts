import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { IExpressCache } from './express-cache';
import { REAPER_METRIC_NAMES, type OrphanReaper } from './orphan-reaper';
import { validateFleetId } from './private/validation';

/** Props of {@link StorageDashboard}. */
export interface StorageDashboardProps {
  /** The fleet id (title and reaper metrics). */
  readonly fleetId: string;
  /** The Express cache to chart per zone. @default - no cache widgets */
  readonly expressCache?: IExpressCache;
  /** The reaper whose decisions to chart. @default - no reaper widgets */
  readonly reaper?: OrphanReaper;
  /** @default - `mountfleet-<fleetId>-storage` */
  readonly dashboardName?: string;
}

/**
 * A CloudWatch dashboard for a fleet's storage: Express cache requests and errors per zone, scratch file
 * systems alive (as the reaper counts them), the lowest burst credit balance, and the reaper's decisions.
 */
export class StorageDashboard extends Construct {
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
      );
    }
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
      this.dashboard.addWidgets(burst);
    }
  }
}
