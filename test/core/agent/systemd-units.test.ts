import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAgentConfig } from '../../../core/contract/agent-config';
import { MOUNTPOINT_METRICS_NAMESPACE, OTLP_ENDPOINT } from '../../../core/contract/metric-names';
import {
  renderCloudWatchAgentConfig,
  renderMountUnit,
  systemdArg,
  unitName,
} from '../../../core/agent/systemd-units';
import { tuneForInstanceType } from '../../../core/instance/tune-report';
import { STANDIN } from '../../agent/commands/up/failover-harness';
import { REPO_ROOT } from '../../support/moto';

// The agent's own schema, kept with its licence in the repository (test/support/cloudwatch-agent/README.md).
const CLOUDWATCH_AGENT_SCHEMA = join(
  REPO_ROOT,
  'test',
  'support',
  'cloudwatch-agent',
  'schema-v1.300060.0.json',
);

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
  // Mountpoint is the last process the OOM killer should pick: every job on the mount dies with it.
  expect(xz).toMatch(/^OOMScoreAdjust=-900$/m);
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

/** The parts of the CloudWatch agent's config these tests read. */
interface CloudWatchAgentConfig {
  agent: { region: string };
  metrics: {
    namespace: string;
    force_flush_interval: number;
    append_dimensions: Record<string, string>;
    metrics_collected: { otlp: { http_endpoint: string } & Record<string, unknown> };
  };
  logs: { logs_collected: { files: { collect_list: Array<Record<string, string>> } } };
}

describe('CloudWatch agent config', () => {
  const render = () =>
    JSON.parse(
      renderCloudWatchAgentConfig({
        fleetId: 'training',
        region: 'us-east-1',
        metricsLogFile: '/var/log/mountfleet/metrics.log',
      }),
    ) as CloudWatchAgentConfig;

  // The agent refuses to start on a config its schema rejects.
  test('passes the CloudWatch agent v1.300060.0 schema (draft-04)', async () => {
    expect(await schemaErrors(CLOUDWATCH_AGENT_SCHEMA, render())).toEqual([]);
    // The check can fail: a key the agent does not know is refused.
    const unknown = render();
    unknown.metrics.metrics_collected.otlp.interval = 10;
    expect((await schemaErrors(CLOUDWATCH_AGENT_SCHEMA, unknown)).join()).toMatch(/interval/);
  });

  test('receives OTLP where Mountpoint sends it and publishes to the namespace the role may write', () => {
    const cfg = render();
    expect(cfg.agent.region).toBe('us-east-1');
    expect(cfg.metrics.namespace).toBe(MOUNTPOINT_METRICS_NAMESPACE);
    expect(cfg.metrics.namespace).toBe('Mountfleet/Mountpoint');
    expect(cfg.metrics.metrics_collected.otlp.http_endpoint).toBe('127.0.0.1:4318');
    expect(`http://${cfg.metrics.metrics_collected.otlp.http_endpoint}`).toBe(OTLP_ENDPOINT);
    expect(cfg.metrics.force_flush_interval).toBe(60);
    // One dimension per fleet, none per instance: each distinct dimension set is a billed custom metric.
    expect(cfg.metrics.append_dimensions).toEqual({ AutoScalingGroupName: '${aws:AutoScalingGroupName}' });
  });

  test("ships the switch metrics log only to the fleet's own log group, leaving retention to the stack", () => {
    const files = render().logs.logs_collected.files.collect_list;
    expect(files).toEqual([
      {
        file_path: '/var/log/mountfleet/metrics.log',
        log_group_name: '/mountfleet/training/agent-metrics',
        log_stream_name: '{instance_id}',
      },
    ]);
  });
});

/** Validates with the virtualenv's jsonschema (installed with cfn-lint), draft-04; one line per error. */
async function schemaErrors(schemaFile: string, config: unknown): Promise<string[]> {
  const script = [
    'import json, sys',
    'from jsonschema import Draft4Validator',
    'schema = json.load(open(sys.argv[1]))',
    'config = json.load(sys.stdin)',
    'for e in Draft4Validator(schema).iter_errors(config):',
    '    print("/".join(map(str, e.path)) + ": " + e.message)',
  ].join('\n');
  const child = execFile(join(REPO_ROOT, '.venv', 'bin', 'python'), ['-c', script, schemaFile]);
  child.stdin!.end(JSON.stringify(config));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code).toBe(0);
  return out.split('\n').filter(Boolean);
}
