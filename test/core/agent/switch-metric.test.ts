import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendMetric } from '../../../core/agent/switch-metric';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mf-switch-metric-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('one embedded-metric-format line per switch, in the Mountfleet/Express namespace', () => {
  const file = join(dir, 'log', 'metrics.log');
  appendMetric(file, 'train', '/mnt/data', 'direct', 1200, 300, 1_700_000_000_000);
  appendMetric(file, 'train', '/mnt/data', 'xz', 0, 250, 1_700_000_060_000);
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: unknown[] } });
  expect(lines).toHaveLength(2);
  expect(lines[0]._aws.CloudWatchMetrics).toEqual([
    {
      Namespace: 'Mountfleet/Express',
      Dimensions: [['FleetId', 'Mount', 'Direction']],
      Metrics: [
        { Name: 'ExpressCacheSwitches', Unit: 'Count' },
        { Name: 'ExpressCacheDetectionTime', Unit: 'Milliseconds' },
        { Name: 'ExpressCacheSwitchTime', Unit: 'Milliseconds' },
      ],
    },
  ]);
  expect(lines[0]).toMatchObject({
    FleetId: 'train',
    Mount: '/mnt/data',
    Direction: 'to-direct',
    ExpressCacheSwitches: 1,
    ExpressCacheDetectionTime: 1200,
    ExpressCacheSwitchTime: 300,
  });
  expect(lines[1]).toMatchObject({ Direction: 'to-express', ExpressCacheSwitchTime: 250 });
});

test('the line is byte for byte what CloudWatch dashboards and alarms were built on', () => {
  const file = join(dir, 'metrics.log');
  appendMetric(file, 'train', '/mnt/data', 'direct', 1200, 300, 1_700_000_000_000);
  expect(readFileSync(file, 'utf8')).toBe(
    '{"_aws":{"Timestamp":1700000000000,"CloudWatchMetrics":[{"Namespace":"Mountfleet/Express",' +
      '"Dimensions":[["FleetId","Mount","Direction"]],"Metrics":[{"Name":"ExpressCacheSwitches","Unit":"Count"},' +
      '{"Name":"ExpressCacheDetectionTime","Unit":"Milliseconds"},{"Name":"ExpressCacheSwitchTime","Unit":"Milliseconds"}]}]},' +
      '"FleetId":"train","Mount":"/mnt/data","Direction":"to-direct","ExpressCacheSwitches":1,' +
      '"ExpressCacheDetectionTime":1200,"ExpressCacheSwitchTime":300}\n',
  );
});
