/**
 * `up` in systemd mode, with the commands it runs recorded instead of run: every unit file is written
 * before one daemon-reload, and units are started, never enabled (at boot the agent's own unit starts
 * them after its pre-mount probe).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseAgentConfig } from '../../../core/contract/agent-config';
import { OTLP_ENDPOINT } from '../../../core/contract/metric-names';
import { MountAgent, type AgentOptions } from '../../../core/agent/mount-agent';
import { FALLBACK_INSTANCE_TYPES } from '../../../core/tuner/instance-facts';
import { readState } from '../../../core/agent/agent-state';
import { processStartTime } from '../../../core/system/processes';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-agent-systemd-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Two mounts in systemd mode; the commands the agent runs are recorded in `calls`, not run. */
function agentOptions(calls: string[][], overrides: Partial<AgentOptions> = {}): AgentOptions {
  const unitDir = join(dir, 'units');
  return {
    config: parseAgentConfig({
      version: 1,
      fleetId: 'units',
      region: 'us-east-1',
      mounts: [
        { bucket: 'datasets', prefix: 'train/', path: join(dir, 'train'), cache: 'local' },
        { bucket: 'datasets', prefix: 'eval/', path: join(dir, 'eval'), cache: 'metadata' },
      ],
    }),
    identity: {
      instanceId: 'i-0123456789abcdef0',
      instanceType: 'm6i.xlarge',
      region: 'us-east-1',
      availabilityZone: 'us-east-1a',
      availabilityZoneId: 'use1-az4',
    },
    instance: FALLBACK_INSTANCE_TYPES.get('m6i.xlarge')!,
    host: {
      memory: { totalMiB: 16384, source: 'test' },
      cacheVolume: { kind: 'root', directory: join(dir, 'cache'), capacityMiB: 4096, reason: 'test' },
      interfaces: [],
    },
    mountS3: '/usr/bin/mount-s3',
    mode: 'systemd',
    runDir: join(dir, 'run'),
    unitDir,
    cloudWatchAgentConfigFile: join(dir, 'cwagent.json'),
    metricsLogFile: join(dir, 'metrics.log'),
    metricsRelay: 'http://127.0.0.1:0',
    expressClient: (): S3Client => {
      throw new Error('no mount uses the Express cache: no client is needed');
    },
    run: async (command, args) => {
      calls.push([command, ...args]);
      // Each start must find its unit already written and systemd already reloaded.
      if (args[0] === 'start') expect(existsSync(join(unitDir, args[1]))).toBe(true);
      return '';
    },
    log: () => {},
    ...overrides,
  };
}

test('writes every unit, reloads systemd once, then starts each unit without enabling it', async () => {
  const calls: string[][] = [];
  const options = agentOptions(calls);
  const { unitDir } = options;
  const agent = await MountAgent.create(options);
  await agent.start();
  const units = agent.plan.mounts.map((m) => `mountfleet-${m.name}-main.service`);
  expect(readdirSync(unitDir).sort()).toEqual([...units].sort());
  expect(calls.filter(([c]) => c === 'systemctl')).toEqual([
    ['systemctl', 'daemon-reload'],
    ...units.map((u) => ['systemctl', 'start', u]),
  ]);
  // The pid and its start time name this one process, so `down` can tell a reused pid from the agent.
  agent.saveState();
  const state = readState(options.runDir)!;
  expect(state).toMatchObject({ pid: process.pid, pidStartTime: processStartTime(process.pid) });

  // Each unit's Mountpoint exports to its own path on the agent's metrics relay.
  const relay = (state.metricsRelay as { endpoint: string }).endpoint;
  expect(relay).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/);
  for (const m of agent.plan.mounts) {
    const unit = readFileSync(join(unitDir, `mountfleet-${m.name}-main.service`), 'utf8');
    expect(unit).toContain(`--otlp-endpoint ${relay}/mounts/${m.name}/main `);
  }

  // The CloudWatch agent's config names this fleet's region and log group.
  const cloudWatchAgent = JSON.parse(readFileSync(options.cloudWatchAgentConfigFile, 'utf8'));
  expect(cloudWatchAgent.agent.region).toBe('us-east-1');
  expect(cloudWatchAgent.logs.logs_collected.files.collect_list[0].log_group_name).toBe(
    '/mountfleet/units/agent-metrics',
  );

  await agent.stop();
  expect(calls.slice(-2)).toEqual(units.map((u) => ['systemctl', 'stop', u]));
});

test("with the metrics relay's port taken, Mountpoint exports straight to the CloudWatch agent and the state says why nothing is counted", async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const busy = `http://127.0.0.1:${(taken.address() as AddressInfo).port}`;
  const events: Record<string, unknown>[] = [];
  try {
    const options = agentOptions([], { metricsRelay: busy, log: (e) => events.push(e) });
    const agent = await MountAgent.create(options);
    await agent.start();
    for (const m of agent.plan.mounts) {
      const unit = readFileSync(join(options.unitDir, `mountfleet-${m.name}-main.service`), 'utf8');
      expect(unit).toContain(`--otlp-endpoint ${OTLP_ENDPOINT} `);
    }
    const state = readState(options.runDir)!;
    expect(state.metricsRelay).toEqual({ unavailable: expect.stringContaining(`cannot listen on ${busy}`) });
    expect(state.mounts.flatMap((m) => m.processes).every((p) => p.metrics === undefined)).toBe(true);
    expect(events).toContainEqual(expect.objectContaining({ event: 'metrics-relay-unavailable' }));
    expect(agent.plan.host.find((d) => d.setting === '--otlp-endpoint')?.value).toBe(OTLP_ENDPOINT);
    await agent.stop();
  } finally {
    await new Promise<void>((r) => taken.close(() => r()));
  }
});
