/**
 * A Batch host's agent (`up --supervise` with agent.json `containers`) on the real Mountpoint (the project's harness,
 * or the official mount-s3 named by MOUNTFLEET_MOUNT_S3) against moto, with job containers played by the container
 * stand-in (binds as Docker makes them) in a stand-in task cgroup: a job left on a dead or switched-away mount is
 * ended with the reason in its log, one started on the live mount is not, and the ready file follows the mounts.
 * One scenario run (guard-scenario.ts); each test checks a part. The figures docs/batch.md quotes are
 * bench/container-guard.ts's (this prints them too, asserting none).
 */
import { emulatorEndpoint, useEmulator } from '../../../support/emulator';
import { realMountpointForTests } from '../../../support/real-mountpoint';
import { GUARD_SCENARIO_TIMEOUT_MS, runGuard, type GuardResult } from './guard-harness';

useEmulator();
const { binary, it, skip } = realMountpointForTests();

/** How long the zone stays dark at most while the job left on it must end (it ends within seconds). */
const ZONE_DARK_MS = 30_000;

let r: GuardResult;
beforeAll(async () => {
  if (skip) return;
  r = await runGuard(emulatorEndpoint(), binary, ZONE_DARK_MS);
  const { restart, zone } = r;
  process.stdout.write(
    `container guard figures: ${JSON.stringify({ restart: { ...restart, stderr: undefined }, zone: { ...zone, stderr: undefined } })}\n`,
  );
}, GUARD_SCENARIO_TIMEOUT_MS + 20_000);

const endedLines = () => r.agentLog.split('\n').filter((l) => l.includes('"event":"container-ended"'));

it('the ready file holds the agent pid once every mount is live', () => {
  expect(r.error).toBeUndefined();
  expect(r.readyFileHoldsAgentPid).toBe(true);
});

it('kill -9 of Mountpoint: the job reading the mount is ended by SIGKILL with the reason in its log, and the ready file goes and comes back', () => {
  const restart = r.restart!;
  expect(restart.signal).toBe('SIGKILL');
  expect(restart.stderr).toMatch(
    /^mountfleet: ending this job: \S+\/mnt\/plain .*\(Mountpoint restarted\) on i-0123456789abcdef0; its bind in the container cannot see the live mount; Batch retries it while attempts remain$/m,
  );
  expect(restart.readyGoneMs).toBeLessThan(restart.readyBackMs);
  expect(endedLines()[0]).toMatch(/"reason":"Mountpoint restarted".*"killedBy":"cgroup.kill","told":true/);
});

it('a job started after the restart reads the live mount and is not ended', () => {
  expect(r.afterRestartFirstOk).toBe(true);
  expect(r.survivors?.afterRestart).toBe(true);
});

it('a dark Express zone: the job on the Express-cached process is ended after the switch; one started after it, on the standby, reads on', () => {
  const zone = r.zone!;
  expect(r.heldOnXz).toBe(true);
  expect(zone.readyGoneMs).toBeLessThanOrEqual(zone.switchedMs);
  expect(zone.guardMs).toBeGreaterThanOrEqual(zone.switchedMs - 50); // the state file is written after the switch
  expect(zone.stderr).toMatch(/\(Express cache zone down\)/);
  expect(r.afterSwitchOnDirect).toBe(true);
  expect(r.survivors?.afterSwitch).toBe(true);
  // Killed, it waited for the read the Express-cached process took before the zone went dark; the agent aborted
  // that process's FUSE connection and stopped it, so the container ended with the zone still dark.
  expect(zone.endedMs).toBeDefined();
  expect(zone.signal).toBe('SIGKILL');
  expect(r.agentLog).toMatch(/"event":"express-connection-aborted".*"outcome":"aborted"/);
  expect(r.agentLog).toMatch(/"event":"express-process-stopped"/);
});

it('the state file counts the jobs ended', () => {
  expect(r.containersInState).toEqual({ ready: true, ended: 2 });
  expect(endedLines()).toHaveLength(4); // the two above, and the two left when the agent stopped
});

it('stopping the agent removes the ready file and ends the jobs left on its mounts', () => {
  expect(r.readyFileAfterStop).toBe(false);
  for (const job of r.afterStop!) {
    expect(job.signal).toBe('SIGKILL');
    expect(job.stderr).toMatch(/\(Mountpoint stopped\)/);
  }
});
