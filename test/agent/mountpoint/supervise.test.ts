/**
 * `mountfleet up --supervise` on the real Mountpoint (the official mount-s3 named by MOUNTFLEET_MOUNT_S3, or
 * the project's harness on the same crates) against moto, in a private mount namespace: mounts, reads,
 * kill -9 and restart, a restart that keeps failing, and `down`. One scenario run; each test checks a part.
 */
import { emulatorEndpoint, useEmulator } from '../../support/emulator';
import { realMountpointForTests } from '../../support/real-mountpoint';
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
