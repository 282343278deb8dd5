import { Match, Template } from 'aws-cdk-lib/assertions';
import { OrphanReaper, StorageDashboard } from '../../lib';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { fleetStack } from './fleet-fixture';
import { ensureBundles, fastApp, renderJoin, testStack } from './support';

beforeAll(ensureBundles);

describe('StorageDashboard', () => {
  test('rejects a bad fleet id with the fix', () => {
    expect(() => new StorageDashboard(testStack(), 'Dashboard', { fleetId: 'my_fleet' })).toThrow(
      /^Test\/Dashboard: fleetId: fleet id "my_fleet" .* — for example "training"$/,
    );
  });

  test("charts Mountpoint's cache hits, S3 latency and errors and FUSE latency from the fleet's namespace", () => {
    const { stack, fleet, template } = fleetStack();
    new StorageDashboard(stack, 'Dashboard', { fleetId: 'train', fleet });
    const t = template();
    t.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardBody: Match.objectLike({}) });
    const [dashboard] = Object.values(t.findResources('AWS::CloudWatch::Dashboard')) as Array<{
      Properties: { DashboardBody: unknown };
    }>;
    const body = JSON.parse(renderJoin(dashboard.Properties.DashboardBody)) as {
      widgets: Array<{ properties: { title: string; metrics: unknown[][] } }>;
    };
    const group = `<Ref:${Object.keys(t.findResources('AWS::AutoScaling::AutoScalingGroup'))[0]}>`;
    const metricsOf = (title: RegExp) =>
      body.widgets.find((w) => title.test(w.properties.title))!.properties.metrics;
    const ns = 'Mountfleet/Mountpoint';
    /** One metric line of a widget: namespace, name, Mountpoint's dimensions, the group, the statistic. */
    const metric = (name: string, dimensions: string[], stat: string) =>
      expect.arrayContaining([
        ns,
        name,
        ...dimensions,
        'AutoScalingGroupName',
        group,
        expect.objectContaining({ stat }),
      ]);
    expect(metricsOf(/served from a cache/)).toEqual(
      expect.arrayContaining([
        metric('experimental.fuse.cache_hit', [], 'Sum'),
        metric('fuse.request_latency', ['fuse_request', 'read'], 'SampleCount'),
      ]),
    );
    expect(metricsOf(/first-byte latency/)).toEqual([
      metric('s3.request_first_byte_latency', ['s3_request', 'GetObject'], 'p50'),
      metric('s3.request_first_byte_latency', ['s3_request', 'GetObject'], 'p99'),
    ]);
    expect(JSON.stringify(metricsOf(/S3 errors/))).toContain(
      `SEARCH('{${ns},AutoScalingGroupName,http_status,s3_request} MetricName=\\"s3.request_errors\\" AutoScalingGroupName=\\"${group}\\"', 'Sum', 300)`,
    );
    expect(metricsOf(/FUSE read latency/)).toEqual([
      metric('fuse.request_latency', ['fuse_request', 'read'], 'p50'),
      metric('fuse.request_latency', ['fuse_request', 'read'], 'p99'),
    ]);
  });

  test('the stack dashboard has the Mountpoint widgets beside the scratch and reaper widgets', () => {
    const [config] = resolveAppConfig({}, '(test)');
    const stack = new MountfleetStack(fastApp(), config.stackName, { config });
    const [dashboard] = Object.values(
      Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'),
    ) as Array<{
      Properties: { DashboardBody: unknown };
    }>;
    const titles = (
      JSON.parse(renderJoin(dashboard.Properties.DashboardBody)) as {
        widgets: Array<{ properties: { title: string } }>;
      }
    ).widgets.map((w) => w.properties.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Mountpoint reads served from a cache (local or Express)',
        'Mountpoint S3 errors (by request and HTTP status)',
        'Mountpoint S3 first-byte latency, GetObject (microseconds)',
        'Mountpoint FUSE read latency (microseconds)',
        'Scratch file systems alive (seen per reaper run)',
        'Reaper decisions',
        'Express cache switches (per mount and direction)',
        'Express cache switch: detection and switch time (ms, longest)',
      ]),
    );
  });

  test("charts the fleet's Express cache switches and every reaper count, Foreign included", () => {
    const { stack, fleet, expressCache } = fleetStack();
    const reaper = new OrphanReaper(stack, 'Reaper', { fleetId: 'train' });
    new StorageDashboard(stack, 'Dashboard', { fleetId: 'train', fleet, expressCache, reaper });
    const [dashboard] = Object.values(
      Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'),
    ) as Array<{ Properties: { DashboardBody: unknown } }>;
    const body = JSON.parse(renderJoin(dashboard.Properties.DashboardBody)) as {
      widgets: Array<{ properties: { title: string; metrics: unknown[][] } }>;
    };
    const metricsOf = (title: string) =>
      JSON.stringify(body.widgets.find((w) => w.properties.title === title)!.properties.metrics);
    const search = (name: string, stat: string) =>
      `SEARCH('{Mountfleet/Express,FleetId,Mount,Direction} MetricName=\\"${name}\\" FleetId=\\"train\\"', '${stat}', 300)`;
    expect(metricsOf('Express cache switches (per mount and direction)')).toContain(
      search('ExpressCacheSwitches', 'Sum'),
    );
    const times = metricsOf('Express cache switch: detection and switch time (ms, longest)');
    expect(times).toContain(search('ExpressCacheDetectionTime', 'Maximum'));
    expect(times).toContain(search('ExpressCacheSwitchTime', 'Maximum'));
    const decisions = metricsOf('Reaper decisions');
    for (const name of ['Deleted', 'Marked', 'Unmarked', 'Kept', 'Foreign', 'Failed'])
      expect(decisions).toContain(`"Mountfleet/Reaper","${name}","Fleet","train"`);
  });
});
