/**
 * What the scratch burst-credit guard needs from the constructs: UpdateFileSystem on the fleet's own scratch
 * only (aws:ResourceTag/mountfleet:fleet, the Service Authorization Reference's condition key for
 * `file-system`), GetMetricData (no resource type for classic metrics), and its metrics on the dashboard.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { StorageDashboard } from '../../lib';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { SCRATCH_METRICS_NAMESPACE } from '../../core/contract/metric-names';
import { buildFleet } from './fleet-fixture';
import { fastApp, renderJoin } from './support';

type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown; Effect: string };

function statements(t: Template): Statement[] {
  return Object.values(t.findResources('AWS::IAM::Policy')).flatMap(
    (p) =>
      (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument
        .Statement,
  );
}
const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

function dashboardWidgets(t: Template) {
  const [dashboard] = Object.values(t.findResources('AWS::CloudWatch::Dashboard')) as Array<{
    Properties: { DashboardBody: unknown };
  }>;
  return (
    JSON.parse(renderJoin(dashboard.Properties.DashboardBody)) as {
      widgets: Array<{ properties: { title: string; metrics: unknown[][] } }>;
    }
  ).widgets;
}

describe('the scratch burst-credit guard in the constructs', () => {
  test("UpdateFileSystem only on file systems tagged with the fleet's id, denied on untagged ones", () => {
    const all = statements(buildFleet().template());
    const updates = all.filter((s) => actionsOf(s).includes('elasticfilesystem:UpdateFileSystem'));
    expect(updates).toEqual([
      {
        Action: 'elasticfilesystem:UpdateFileSystem',
        Effect: 'Allow',
        Resource: expect.objectContaining({
          'Fn::Join': ['', expect.arrayContaining([':elasticfilesystem:us-east-1:', ':file-system/*'])],
        }),
        Condition: { StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' } },
      },
      {
        Action: expect.arrayContaining([
          'elasticfilesystem:UpdateFileSystem',
          'elasticfilesystem:DeleteFileSystem',
        ]),
        Effect: 'Deny',
        Resource: '*',
        Condition: { Null: { 'aws:ResourceTag/mountfleet:fleet': 'true' } },
      },
    ]);
    expect(all).toContainEqual({ Action: 'cloudwatch:GetMetricData', Effect: 'Allow', Resource: '*' });
  });

  test('a fleet without scratch gets neither', () => {
    const all = statements(buildFleet({ scratch: false }).template());
    expect(JSON.stringify(all)).not.toMatch(/UpdateFileSystem|GetMetricData/);
  });

  test("the dashboard charts the guard's metrics of this fleet beside the burst-credit widget", () => {
    const { stack, fleet, template } = buildFleet();
    new StorageDashboard(stack, 'Dashboard', { fleetId: 'train', fleet });
    const widgets = dashboardWidgets(template());
    const titles = widgets.map((w) => w.properties.title);
    const burst = titles.findIndex((t) => /Lowest EFS burst credit balance/.test(t));
    expect(titles.slice(burst + 1, burst + 3)).toEqual([
      'Scratch jobs: burst credit used (%, the most spent) and switches to Elastic',
      'Scratch jobs: projected minutes until the burst credit runs out (the soonest)',
    ]);
    const line = (name: string, stat: string) =>
      expect.arrayContaining([
        SCRATCH_METRICS_NAMESPACE,
        name,
        'FleetId',
        'train',
        expect.objectContaining({ stat }),
      ]);
    expect(widgets[burst + 1].properties.metrics).toEqual([
      line('BurstCreditUsedPercent', 'Maximum'),
      line('ThroughputModeSwitches', 'Sum'),
    ]);
    expect(widgets[burst + 2].properties.metrics).toEqual([line('MinutesToCreditExhaustion', 'Minimum')]);
  });

  test('the bundled stack has them too, between the scratch and the reaper widgets', () => {
    const [config] = resolveAppConfig({}, '(test)');
    const stack = new MountfleetStack(fastApp(), config.stackName, { config });
    const titles = dashboardWidgets(Template.fromStack(stack)).map((w) => w.properties.title);
    const at = (re: RegExp) => titles.findIndex((t) => re.test(t));
    expect(at(/^Scratch file systems alive/)).toBeLessThan(at(/^Scratch jobs: burst credit used/));
    expect(at(/^Scratch jobs: projected minutes/)).toBeLessThan(at(/^Reaper decisions/));
  });
});
