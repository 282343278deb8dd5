/**
 * The Express cache failover, for real: in a private mount namespace the agent (`up --supervise`, the
 * bundled CLI) mounts a dataset through the Mountpoint stand-in as an Express-cached primary plus a
 * cache-less standby; a reader holds a file open; the fault proxy black-holes S3 (the dark zone).
 */
import { emulatorEndpoint, useEmulator } from '../../../support/emulator';
import { runFailover } from './failover-harness';

useEmulator();

test('a dark Express zone moves new opens to the standby within 10 s, keeps held handles, and comes back', async () => {
  const r = await runFailover({
    motoEndpoint: emulatorEndpoint(),
    probeIntervalMs: 1000,
    probeTimeoutMs: 800,
  });

  expect(r.ready.heldOnExpress).toBe(true);
  expect(r.ready.newOpenDev).toBe(r.ready.xzDev);
  expect(r.ready.xzDev).not.toBe(r.ready.directDev);

  expect(r.proxyRequestsBlackholed).toBeGreaterThan(0);
  expect(r.switchedMs).toBeLessThanOrEqual(10_000);
  expect(r.heldOk).toMatchObject({ bytes: 1024 * 1024, same: true, stillOnExpress: true });
  expect(r.backMs).toBeLessThanOrEqual(15_000);

  expect(r.restartedMs).toBeLessThan(20_000);
  const mount = (r.done.state.mounts as { active: string; switches: object; processes: object[] }[])[0];
  expect(mount).toMatchObject({ active: 'xz', switches: { toDirect: 1, toExpress: 1 } });
  expect(mount.processes).toContainEqual(expect.objectContaining({ role: 'xz', restarts: 1, running: true }));
  const switches = r.done.agentLog.split('\n').filter((l) => l.includes('"event":"switch"'));
  expect(switches.map((l) => (JSON.parse(l) as { to: string }).to)).toEqual(['direct', 'xz']);
  expect(r.done.agentExit).toBe(0);
  expect(r.done.leftMounted).toBe(0);
}, 90_000);

test('a zone that is dark at boot does not block the mount: standby first, Express-cached once it answers', async () => {
  const r = await runFailover({
    motoEndpoint: emulatorEndpoint(),
    probeIntervalMs: 1000,
    probeTimeoutMs: 800,
    darkAtStart: true,
  });
  expect(r.ready.newOpenDev).toBe(r.ready.directDev);
  expect(r.backMs).toBeLessThanOrEqual(15_000);
  const log = r.done.agentLog;
  expect(log).toMatch(/"event":"express-probe".*"healthy":false/);
  const mount = (r.done.state.mounts as { active: string; switches: object }[])[0];
  expect(mount).toMatchObject({ active: 'xz', switches: { toDirect: 0, toExpress: 1 } });
  expect(r.done.agentExit).toBe(0);
  expect(r.done.leftMounted).toBe(0);
}, 90_000);

test('an Express-cached process that fails to start leaves the standby serving, and is started again', async () => {
  const r = await runFailover({
    motoEndpoint: emulatorEndpoint(),
    probeIntervalMs: 1000,
    probeTimeoutMs: 800,
    expressStartFailsOnce: true,
  });
  expect(r.ready.newOpenDev).toBe(r.ready.directDev);
  expect(r.backMs).toBeLessThanOrEqual(15_000);
  const log = r.done.agentLog;
  expect(log).toMatch(/"event":"express-probe".*"healthy":true/);
  expect(log).toMatch(/"event":"xz-start-failed".*AccessDenied/);
  const mount = (r.done.state.mounts as { active: string; switches: object }[])[0];
  expect(mount).toMatchObject({ active: 'xz', switches: { toDirect: 0, toExpress: 1 } });
  expect(r.done.agentExit).toBe(0);
  expect(r.done.leftMounted).toBe(0);
}, 90_000);
