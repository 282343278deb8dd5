/**
 * `mountfleet up --supervise` on the real Mountpoint (the official mount-s3 named by MOUNTFLEET_MOUNT_S3, or
 * the project's harness on the same crates) against moto, in a private mount namespace: mounts, reads,
 * kill -9 and restart, a restart that keeps failing, and `down`. One scenario run; each test checks a part.
 */
import { emulatorEndpoint, useEmulator } from '../../../support/emulator';
import { realMountpointForTests } from '../../../support/real-mountpoint';
import { runSupervise, type SuperviseRun } from './supervise-harness';

useEmulator();
const { binary, it, skip } = realMountpointForTests();

let run: SuperviseRun;
beforeAll(async () => {
  if (!skip) run = await runSupervise(emulatorEndpoint(), binary);
}, 120_000);

it('up --supervise mounts every bucket (creating each --cache directory) and reads return the seeded bytes', () => {
  const { result, seeded } = run;
  expect(result.error ?? '').not.toMatch(/up exited/);
  expect(result.upMs).toBeDefined();
  expect(result.read).toEqual(seeded);
});

it('a second up --supervise on the same run dir refuses (exit 75, the holder named) and changes nothing', () => {
  expect(run.result.secondUp).toEqual({
    code: 75,
    stderr: expect.stringMatching(
      /^mountfleet up: refusing: \S+\/run is in use by mountfleet up pid \d+ \(since \S+, config \S+\): run `mountfleet down` first/,
    ),
    stateUnchanged: true,
  });
});

it('kill -9 of a Mountpoint process: the path serves again, logged and counted in status --json', () => {
  const { result } = run;
  // Served again is the event the scenario waits for (15 s at most); how fast is bench/mountpoint.ts's figure.
  expect(result.restartMs).toBeDefined();
  expect(result.restartLogged).toBe(true);
  expect(result.restartsCounted).toBe(1);
});

it("the agent counts each mount's S3 requests from Mountpoint's own metrics: the same, per operation, as the requests the proxy saw", () => {
  const counts = run.result.s3Counts!;
  expect(run.result.error).toBeUndefined();
  // Four objects of 2 MiB + 17 bytes, read whole without a cache: at least one GetObject each.
  expect(counts.proxy.GetObject).toBeGreaterThanOrEqual(4);
  expect(counts.agent.byOperation).toEqual(counts.proxy);
  expect(counts.agent.requests).toBe(Object.values(counts.proxy).reduce((a, b) => a + b, 0));
  expect(counts.agent.errors).toBe(0);
});

it("bench train reports each epoch's S3 requests, and warm its own, from the agent's counts", () => {
  const { benchTrain, warm, agentLog } = run.result;
  expect(benchTrain).toBeDefined();
  expect(benchTrain!.json.s3Counts).toEqual({ agentMount: expect.stringMatching(/\/mnt\/uncached$/) });
  const epochGets = benchTrain!.json.epochs.map((e) => e.s3?.byOperation?.GetObject ?? 0);
  // No cache: every epoch reads every object from S3 again, and each epoch's GetObjects are its own.
  expect(epochGets.every((n) => n >= 4)).toBe(true);
  expect(epochGets.reduce((a, b) => a + b, 0)).toBe(benchTrain!.proxyGetObject);
  // The cached mount, read whole before: no GetObject in either epoch, and every read served from the cache.
  const cached = run.result.cachedBenchTrain!;
  expect(cached.proxyGetObject).toBe(0);
  for (const epoch of cached.json.epochs) {
    expect(epoch.s3?.byOperation?.GetObject).toBeUndefined();
    expect(epoch.s3?.cacheHits).toBeGreaterThanOrEqual(12);
  }
  expect(warm!.json.s3Counts).toEqual(benchTrain!.json.s3Counts);
  expect(warm!.json.s3?.byOperation?.GetObject).toBe(warm!.proxyGetObject);
  expect(warm!.proxyGetObject).toBeGreaterThanOrEqual(4);
  // The relay passed every export on to where the CloudWatch agent listens, and said so when nothing answered there.
  expect(agentLog).toMatch(/"event":"metrics-relay","endpoint":"http:\/\/127\.0\.0\.1:\d+"/);
});

it('a restart that fails is logged with the reason and retried with backoff', () => {
  const failures = run.result.restartFailures ?? [];
  expect(failures.length).toBeGreaterThanOrEqual(5);
  expect(failures[0]).toMatch(/"key":"[^"]+\/main".*exited/);
});

it('down unmounts everything without waiting out a restart backing off, and leaves no process', () => {
  const { result } = run;
  expect(result.error).toBeUndefined();
  expect(result.downExit).toBe(0);
  // The pending restart is 4-8 s away when `down` comes: the agent going from SIGTERM to exit in less shows it
  // cancelled the backoff rather than waited it out (how fast is bench/mountpoint.ts's figure).
  expect(result.agentStopMs).toBeLessThan(4000);
  expect(result.agentExit).toBe(0);
  expect(result.leftMounted).toBe(0);
  expect(result.leftProcesses).toBe(0);
});
