/**
 * The ready file and the job-starter unit of a Batch host (core/agent/mounts-ready.ts), with the commands recorded
 * instead of run: under systemd the ECS agent's unit is stopped when the mounts leave ready and started when they
 * come back, without waiting for either (`--no-block`), in the order decided; under --supervise only the file.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MountsReady } from '../../../core/agent/mounts-ready';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-ready-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function gate(jobStarterUnit?: string, fail?: string) {
  const calls: string[][] = [];
  const events: Record<string, unknown>[] = [];
  const ready = new MountsReady({
    runDir: dir,
    ...(jobStarterUnit ? { jobStarterUnit } : {}),
    run: async (file, args) => {
      calls.push([file, ...args]);
      if (fail && args[0] === fail) throw new Error(`${file} ${args.join(' ')} failed: Unit not found.`);
      return '';
    },
    log: (e) => events.push(e),
  });
  return { ready, calls, events, file: join(dir, 'mounts-ready') };
}

test("an earlier agent's ready file is removed at once: its pid may be reused", () => {
  writeFileSync(join(dir, 'mounts-ready'), '4242\n');
  const { file } = gate('ecs.service');
  expect(existsSync(file)).toBe(false);
});

test('systemd: ready writes the pid and starts the job starter; leaving removes the file and stops it; repeats change nothing', async () => {
  const { ready, calls, events, file } = gate('ecs.service');
  await ready.enter();
  expect(readFileSync(file, 'utf8')).toBe(`${process.pid}\n`);
  expect(existsSync(`${file}.tmp`)).toBe(false);
  await ready.enter();
  await ready.leave('/mnt/data: its main process has a dead mount (ENOTCONN)');
  expect(existsSync(file)).toBe(false);
  await ready.leave('again');
  await ready.enter();
  expect(calls).toEqual([
    ['systemctl', 'start', '--no-block', 'ecs.service'],
    ['systemctl', 'stop', '--no-block', 'ecs.service'],
    ['systemctl', 'start', '--no-block', 'ecs.service'],
  ]);
  expect(events.map((e) => e.event)).toEqual([
    'mounts-ready',
    'job-starter-started',
    'mounts-not-ready',
    'job-starter-stopped',
    'mounts-ready',
    'job-starter-started',
  ]);
  expect(events[2]).toMatchObject({ reason: '/mnt/data: its main process has a dead mount (ENOTCONN)' });
});

test('the first decision acts even when it is "not ready": the unit an earlier agent left is not trusted', async () => {
  const { ready, calls } = gate('ecs.service');
  await ready.leave('a user path is being switched');
  expect(calls).toEqual([['systemctl', 'stop', '--no-block', 'ecs.service']]);
});

test('a stop decided right after a start reaches systemctl after it, not before', async () => {
  const order: string[] = [];
  let releaseStart: () => void = () => undefined;
  let startCalled: () => void = () => undefined;
  const startIsWaiting = new Promise<void>((r) => (startCalled = r));
  const ready = new MountsReady({
    runDir: dir,
    jobStarterUnit: 'ecs.service',
    run: async (_file, args) => {
      if (args[0] === 'start') {
        startCalled();
        await new Promise<void>((r) => (releaseStart = r));
      }
      order.push(args[0]);
      return '';
    },
    log: () => undefined,
  });
  const starting = ready.enter();
  const stopping = ready.leave('switching');
  await startIsWaiting;
  releaseStart();
  await Promise.all([starting, stopping]);
  expect(order).toEqual(['start', 'stop']);
});

test('a job starter that cannot be stopped is logged; the file goes all the same', async () => {
  const { ready, events, file } = gate('ecs.service', 'stop');
  await ready.enter();
  await ready.leave('switching');
  expect(existsSync(file)).toBe(false);
  expect(events).toContainEqual(
    expect.objectContaining({
      event: 'job-starter-stop-failed',
      unit: 'ecs.service',
      error: expect.stringContaining('Unit not found'),
    }),
  );
});

test('--supervise: the file only, no systemctl', async () => {
  const { ready, calls, file } = gate();
  await ready.enter();
  expect(existsSync(file)).toBe(true);
  await ready.leave('stopping');
  expect(calls).toEqual([]);
});
