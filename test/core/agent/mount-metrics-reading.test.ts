/**
 * Readings of the agent's per-mount S3 counts from its state file (as `up` writes it), with the clock moved
 * by the test: when a reading may be taken, what it waits for, and each reason there is none. The whole
 * path on the real Mountpoint is in test/agent/commands/up/supervise.test.ts.
 */
import { MountfleetError } from '../../../core/common/errors';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentMountMetrics, agentS3Counter, s3CountBetween } from '../../../core/agent/mount-metrics-reading';
import type { ProcessMetrics } from '../../../core/agent/mountpoint-counters';
import { writeState, type AgentState } from '../../../core/agent/agent-state';
import { processStartTime } from '../../../core/system/processes';
import { steppingClock } from '../../support/stepping-clock';

let dir: string;
let runDir: string;
let mountPath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-mount-metrics-'));
  runDir = join(dir, 'run');
  mountPath = join(dir, 'mnt', 'data');
  mkdirSync(join(mountPath, 'train'), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const metrics = (over: Partial<ProcessMetrics> = {}): ProcessMetrics => ({
  since: '2026-11-26T00:00:00.000Z',
  exports: 3,
  lastPointAt: '2026-11-26T00:00:30.000Z',
  s3Requests: { GetObject: 10, HeadObject: 2 },
  s3RequestErrors: 0,
  reads: 40,
  readBytes: 40 * 131072,
  cacheHits: 1,
  fuseRequests: { statfs: 1 },
  ...over,
});

/** The agent's state: one failover mount at mountPath, `xz` active, with these process metrics. */
function agentState(
  xz: ProcessMetrics | undefined,
  direct?: ProcessMetrics,
  relay?: AgentState['metricsRelay'],
): void {
  const process_ = (role: 'xz' | 'direct', m?: ProcessMetrics) => ({
    role,
    mountPoint: join(runDir, 'mnt-data', role),
    running: true,
    restarts: 0,
    ...(m ? { metrics: m } : {}),
  });
  writeState(runDir, {
    version: 1,
    pid: process.pid,
    pidStartTime: processStartTime(process.pid),
    mode: 'supervise',
    startedAt: '2026-11-26T00:00:00.000Z',
    instanceType: 'm6i.2xlarge',
    availabilityZoneId: 'use1-az4',
    metricsRelay: relay ?? { endpoint: 'http://127.0.0.1:4319' },
    mounts: [
      {
        name: 'mnt-data',
        path: mountPath,
        bucket: 'datasets',
        prefix: '',
        failover: true,
        active: 'xz',
        processes: [process_('xz', xz), process_('direct', direct)],
        switches: { toDirect: 0, toExpress: 0 },
      },
    ],
  });
}

test('a reading waits for the export that carries its statfs, then adds up every process of the mount', async () => {
  agentState(metrics(), metrics({ s3Requests: { GetObject: 1 }, fuseRequests: {} }));
  const clock = steppingClock(0);
  const counter = AgentMountMetrics.find(join(mountPath, 'train'), runDir, clock);
  expect(counter.mountPoint).toBe(mountPath);
  const reading = counter.read();
  await clock.sleeping();
  // An export that came before the probe (statfs count unchanged) does not end the wait.
  agentState(
    metrics({ s3Requests: { GetObject: 15, HeadObject: 2 }, lastPointAt: new Date().toISOString() }),
  );
  await clock.step();
  // The one that carries it does.
  agentState(
    metrics({
      s3Requests: { GetObject: 20, HeadObject: 2 },
      cacheHits: 4,
      fuseRequests: { statfs: 2 },
      lastPointAt: new Date(Date.now() + 1).toISOString(),
    }),
    metrics({ s3Requests: { GetObject: 1 }, s3RequestErrors: 1, fuseRequests: {} }),
  );
  void clock.step(); // the reading ends instead of sleeping again
  expect(await reading).toEqual({
    requests: 23,
    byOperation: { GetObject: 21, HeadObject: 2 },
    errors: 1,
    cacheHits: 5,
  });
});

test('a reading with no export in time says so instead of waiting for ever', async () => {
  agentState(metrics());
  const clock = steppingClock(0);
  const reading = AgentMountMetrics.find(mountPath, runDir, clock).read();
  const ended = reading.then(
    () => true,
    () => true,
  );
  // Each step lets one 100 ms sleep pass; the last one ends the reading instead of another sleep.
  while (!(await Promise.race([ended, clock.step().then(() => false)])));
  await expect(reading).rejects.toThrow(MountfleetError);
  await expect(reading).rejects.toThrow(/sent the agent no metrics within 25 s of a statfs/);
});

test('no counts, and why: no agent, a path outside its mounts, a relay that could not listen', () => {
  const reason = (path: string) => {
    try {
      AgentMountMetrics.find(path, runDir);
      return 'found';
    } catch (e) {
      return (e as Error).message;
    }
  };
  expect(reason(mountPath)).toMatch(/^no mountfleet agent is running \(run dir /);
  agentState(metrics());
  expect(reason(join(dir, 'mnt', 'data2'))).toMatch(
    /is not under any of the agent's mounts \(.*\/mnt\/data\)$/,
  );
  agentState(undefined, undefined, { unavailable: 'cannot listen on http://127.0.0.1:4319: EADDRINUSE' });
  expect(reason(mountPath)).toBe(
    "the agent's metrics relay is not listening: cannot listen on http://127.0.0.1:4319: EADDRINUSE",
  );
  // A command goes on without them, saying why once.
  const told: string[] = [];
  const counter = agentS3Counter(mountPath, runDir, (r) => told.push(r));
  expect(counter.source).toEqual({ unavailable: told[0] });
  expect(told).toHaveLength(1);
});

test('the difference of two readings, per operation; operations that did not change are left out', () => {
  expect(
    s3CountBetween(
      { requests: 12, byOperation: { GetObject: 10, HeadObject: 2 }, errors: 0, cacheHits: 1 },
      { requests: 20, byOperation: { GetObject: 18, HeadObject: 2 }, errors: 1, cacheHits: 1 },
    ),
  ).toEqual({ requests: 8, byOperation: { GetObject: 8 }, errors: 1, cacheHits: 0 });
  expect(s3CountBetween({ requests: 3 }, { requests: 5 })).toEqual({ requests: 2 });
});
