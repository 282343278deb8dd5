import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAgentConfig } from '../../../core/config';
import {
  renderCloudWatchAgentConfig,
  renderMountUnit,
  systemdArg,
  unitName,
} from '../../../core/mountpoint/systemd';
import { tuneForInstanceType } from '../../../core/mountpoint/tune-report';
import { OTLP_ENDPOINT } from '../../../core/mountpoint/tuning';
import { STANDIN } from '../../agent/mountpoint/failover-harness';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-units-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('one Type=forking unit per Mountpoint process passes systemd-analyze verify', async () => {
  const config = parseAgentConfig({
    version: 1,
    fleetId: 'units',
    region: 'us-east-1',
    mounts: [
      { bucket: 'datasets', prefix: 'imagenet/', path: '/mnt/data', dataset: 'immutable' },
      { bucket: 'outputs', prefix: 'run 1/', path: '/mnt/out', access: 'read-write', cache: 'none' },
    ],
    expressCache: { buckets: { 'use1-az4': 'cache--use1-az4--x-s3' } },
  });
  const { plan } = await tuneForInstanceType({ instanceType: 'g5.12xlarge', config, azId: 'use1-az4' });
  const files: string[] = [];
  for (const m of plan.mounts) {
    for (const p of m.processes) {
      // The real path of a program that exists here: systemd-analyze checks ExecStart= binaries.
      const unit = renderMountUnit({
        mountName: m.name,
        process: p,
        mountS3: STANDIN,
        description: `test ${m.name} ${p.role}`,
      });
      const file = join(dir, unitName(m.name, p.role));
      writeFileSync(file, unit);
      files.push(file);
    }
  }
  expect(files.map((f) => f.split('/').pop())).toEqual([
    'mountfleet-mnt-data-xz.service',
    'mountfleet-mnt-data-direct.service',
    'mountfleet-mnt-out-main.service',
  ]);
  const { stderr } = await promisify(execFile)('systemd-analyze', ['verify', ...files], {
    env: { ...process.env, SYSTEMD_LOG_LEVEL: 'warning' },
  });
  expect(stderr.split('\n').filter((l) => l.includes('mountfleet-'))).toEqual([]);

  const xz = renderMountUnit({
    mountName: 'mnt-data',
    process: plan.mounts[0].processes[0],
    mountS3: '/usr/bin/mount-s3',
    description: 'x',
  });
  expect(xz).toContain('Type=forking');
  expect(xz).toContain('Restart=on-failure');
  expect(xz).toContain('Wants=network-online.target\nAfter=network-online.target');
  expect(xz).toContain('WantedBy=remote-fs.target');
  expect(xz).toContain('Environment=AWS_MAX_ATTEMPTS=5');
  expect(xz).toContain('ExecStop=/usr/bin/fusermount -u /run/mountfleet/mnt-data/xz');
  expect(xz).toMatch(
    /^ExecStart=\/usr\/bin\/mount-s3 .*--cache-xz cache--use1-az4--x-s3 .* datasets \/run\/mountfleet\/mnt-data\/xz$/m,
  );
});

test('ExecStart arguments survive systemd specifiers, variables and spaces', () => {
  expect(systemdArg('--prefix')).toBe('--prefix');
  expect(systemdArg('run 1/')).toBe('"run 1/"');
  expect(systemdArg('50%/')).toBe('"50%%/"');
  expect(systemdArg('$HOME')).toBe('"$$HOME"');
});

test('the CloudWatch agent receives OTLP where Mountpoint sends it and ships the switch metrics log', () => {
  const cfg = JSON.parse(renderCloudWatchAgentConfig({ metricsLogFile: '/var/log/mountfleet/metrics.log' }));
  expect(`http://${cfg.metrics.metrics_collected.otlp.http_endpoint}`).toBe(OTLP_ENDPOINT);
  expect(cfg.logs.logs_collected.files.collect_list[0].file_path).toBe('/var/log/mountfleet/metrics.log');
});
