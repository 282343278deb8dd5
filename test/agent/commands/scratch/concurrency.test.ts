/**
 * `mountfleet scratch run` started side by side for real (the CLI bundle, the emulator, the IMDS stand-in,
 * the stand-in EFS mount helper's tmpfs mounts): the same job twice on one instance, two jobs on one path,
 * one job on two instances, a job's background processes, a hanging mount helper, and many jobs starting
 * at once against a slow IMDS and a throttled emulator. Needs the built bundle.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processGroupMembers } from '../../../../core/system/processes';
import { FaultProxy } from '../../../support/fault-proxy';
import { removeEmptySystemdStandinScopes, SYSTEMD_STANDIN_BIN } from '../../../support/standins';
import {
  job,
  leftovers,
  mountsUnder,
  NOTHING_LEFT,
  sleep,
  useScratchRuns,
  waitUntil,
  waitForGo,
  go,
  liveProcess,
} from './harness';

jest.setTimeout(120_000);

describe('mountfleet scratch run side by side', () => {
  const scratch = useScratchRuns(1);

  it('refuses a second run of the same job on the instance before it creates anything, and waits with --wait-lock', async () => {
    const first = await scratch.start({ job: 'twice', command: waitForGo() });
    await first.waitFor(/^ready$/m);

    const second = await scratch.start({ job: 'twice', command: job('echo second-ran') });
    expect((await second.exited).code).toBe(75);
    expect(second.stderr()).toMatch(
      new RegExp(
        `refusing: job twice of fleet scratch-it is already running on this instance: held by job twice at ${first.path} ` +
          `\\(pid ${first.child.pid}, since \\S+\\); wait for it to end, or use another --job; --wait-lock\\[=SECONDS\\] waits for it instead`,
      ),
    );
    expect(second.stderr()).not.toContain('second-ran');
    expect(second.proxy.stats().total.requests).toBe(0); // not one AWS call

    // A third one waits for the lock, then runs on a fresh file system once the first is done.
    const third = await scratch.start({
      job: 'twice',
      command: job('echo third-ran'),
      extraArgs: ['--wait-lock=60'],
    });
    await third.waitFor(
      /job twice of fleet scratch-it is already running on this instance: .*: waiting \(at most 60 s\)/,
    );
    await sleep(500);
    expect(third.proxy.stats().total.requests).toBe(0);
    go(first);
    expect((await first.exited).code).toBe(0);
    expect((await third.exited).code).toBe(0);
    expect(third.stderr()).toContain('third-ran');
    expect(third.stderr()).toMatch(/created file system fs-/);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it("refuses a second job on a path in use, and the first job's mount stays where it is", async () => {
    const first = await scratch.start({
      job: 'path-a',
      command: waitForGo('mountpoint -q "$MOUNTFLEET_SCRATCH" && echo data > "$MOUNTFLEET_SCRATCH/out"'),
    });
    await first.waitFor(/^ready$/m);
    const second = await scratch.start({
      job: 'path-b',
      command: job('echo second-ran'),
      extraArgs: ['--path', first.path],
    });
    expect((await second.exited).code).toBe(75);
    expect(second.stderr()).toContain(
      `refusing: --path ${first.path} is in use on this instance by job path-a at ${first.path}`,
    );
    expect(second.proxy.stats().total.requests).toBe(0);
    expect(mountsUnder(first.dir)).toEqual([first.path]);

    go(first);
    expect((await first.exited).code).toBe(0); // its write went to its own mount (mountpoint -q held)
    expect(existsSync(first.path)).toBe(false); // nothing landed on the root disk under the path
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it("stops the job's background processes (SIGTERM, then SIGKILL after the grace) before unmounting", async () => {
    const run = await scratch.start({
      job: 'background',
      command: job(
        // A writer that ignores SIGTERM and a plain sleeper, both left behind when the job's shell exits.
        // The job waits until the writer has set its trap: a SIGTERM before that would end it early.
        `(trap '' TERM; touch "$TEST_DIR/trapped"; while :; do date >> "$MOUNTFLEET_SCRATCH/bg.log"; sleep 0.1; done) & ` +
          `while [ ! -e "$TEST_DIR/trapped" ]; do sleep 0.05; done; sleep 300 & echo started-background`,
      ),
    });
    expect((await run.exited).code).toBe(0);
    const pgid = Number(readFileSync(join(run.dir, 'job.pid'), 'utf8').trim());
    expect(run.stderr()).toMatch(
      /the job left \d+ process\(es\) behind: SIGTERM to all of them, 2 s to exit/,
    );
    expect(run.stderr()).toContain('still alive after 2 s: killing them');
    // Every writer is gone, so nothing can write onto the root disk under the path after the unmount.
    expect(processGroupMembers(pgid)).toEqual([]);
    expect(existsSync(run.path)).toBe(false);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it("stops a process that left the job's process group (setsid) through the job's systemd scope", async () => {
    const run = await scratch.start({
      job: 'escaped',
      command: job(
        // setsid takes the writer out of the job's process group; only the scope's cgroup still holds it.
        `setsid sh -c 'trap "" TERM; touch "$TEST_DIR/trapped"; while :; do date >> "$MOUNTFLEET_SCRATCH/escaped.log"; sleep 0.1; done' & ` +
          `echo $! > "$TEST_DIR/escaped.pid"; while [ ! -e "$TEST_DIR/trapped" ]; do sleep 0.05; done; echo started-escaped`,
      ),
      env: { MOUNTFLEET_SYSTEMD_BIN: SYSTEMD_STANDIN_BIN },
    });
    expect((await run.exited).code).toBe(0);
    const writer = Number(readFileSync(join(run.dir, 'escaped.pid'), 'utf8').trim());
    expect(run.stderr()).toMatch(/the job left \d+ process\(es\) behind/);
    // The writer is gone, so nothing can write onto the root disk under the path after the unmount.
    expect(liveProcess(writer)).toBe(false);
    expect(existsSync(run.path)).toBe(false);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
    removeEmptySystemdStandinScopes();
  });

  it('stops at once on SIGTERM while the mount helper hangs, and tears down', async () => {
    const run = await scratch.start({
      job: 'hanging-helper',
      command: job('echo job-ran'),
      env: { MOUNTFLEET_STANDIN_MOUNT_DELAY_SECONDS: '300' },
    });
    await run.waitFor(/\[mounting\]/);
    await sleep(300);
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(143);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(run.stderr()).not.toContain('job-ran');
    expect(mountsUnder(run.dir)).toEqual([]);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('checks the mount helper and the path before IMDS and AWS', async () => {
    const imdsBefore = scratch.instance.imds.requests().length;
    const noHelper = await scratch.start({
      job: 'no-helper',
      command: job('echo job-ran'),
      env: { MOUNTFLEET_EFS_MOUNT_HELPER: '/nonexistent/mount.efs' },
    });
    expect((await noHelper.exited).code).toBe(2);
    expect(noHelper.stderr()).toContain(
      'MOUNTFLEET_EFS_MOUNT_HELPER=/nonexistent/mount.efs is not an executable file',
    );
    // Something else already mounted at --path (a tmpfs of this test's own, removed below).
    const busy = join(mkdtempSync(join(tmpdir(), 'mf-busy-')), 'scratch');
    mkdirSync(busy);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'mountfleet-test-busy', busy]);
    let mounted;
    try {
      mounted = await scratch.start({
        job: 'path-mounted',
        command: job('echo job-ran'),
        extraArgs: ['--path', busy],
      });
      expect((await mounted.exited).code).toBe(2);
    } finally {
      execFileSync('umount', [busy]);
      rmSync(join(busy, '..'), { recursive: true, force: true });
    }
    expect(mounted.stderr()).toContain(`--path ${busy} is already a mount point`);
    for (const run of [noHelper, mounted]) {
      expect(run.stderr()).not.toContain('job-ran');
      expect(run.proxy.stats().total.requests).toBe(0);
    }
    expect(scratch.instance.imds.requests().length).toBe(imdsBefore);
  });

  it('stops at once on SIGTERM while IMDS does not answer', async () => {
    scratch.instance.imds.setDelay(120_000);
    const run = await scratch.start({ job: 'imds-stop', command: job('echo job-ran') });
    // Its first IMDS request is open: the run is past its signal handlers and the local checks.
    await waitUntil(() => scratch.instance.imds.openConnections() > 0, 'the run to ask IMDS');
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    expect({ code, stderr: run.stderr() }).toEqual({ code: 1, stderr: expect.stringContaining('SIGTERM') });
    expect(Date.now() - signalled).toBeLessThan(5000); // not the 15 s IMDS budget
    expect(run.stderr()).toMatch(/cannot read latest\/\S+ from IMDS at .*, stopped: /);
    expect(run.proxy.stats().total.requests).toBe(0);
  });

  it('names IMDS, its budget and the attempts when IMDS never answers, having created nothing', async () => {
    scratch.instance.imds.setDelay(120_000);
    const started = Date.now();
    const run = await scratch.start({ job: 'no-imds', command: job('echo job-ran') });
    expect((await run.exited).code).toBe(1);
    const seconds = (Date.now() - started) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(14);
    expect(seconds).toBeLessThan(25);
    expect(run.stderr()).toMatch(
      new RegExp(
        `cannot read this instance's identity from IMDS \\(cannot read latest/\\S+ from IMDS at ${scratch.instance.imds.endpoint}: ` +
          `\\d+ attempt\\(s\\) in 1\\d\\.\\d s \\(budget 15 s, 1 s per attempt\\): no answer within 1000 ms\\)`,
      ),
    );
    expect(run.stderr()).toContain('nothing was created');
    expect(run.proxy.stats().total.requests).toBe(0);
  });
});

describe('mountfleet scratch run: many jobs starting at once', () => {
  const scratch = useScratchRuns(1);
  const JOBS = 30;

  it('all succeed against an IMDS that stalls at first and an emulator that throttles', async () => {
    // One account-wide rate limit, as AWS throttles per account and Region: all runs share this proxy.
    const shared = await FaultProxy.start({ target: scratch.emulator });
    shared.setRateLimit({ service: 'efs', ratePerSecond: 10, burst: 10 });
    // IMDS answers nothing in time for the first 10 s (each attempt times out after 1 s), then recovers.
    scratch.instance.imds.setDelay(1500);
    setTimeout(() => scratch.instance.imds.setDelay(0), 10_000).unref();
    try {
      const runs = await Promise.all(
        Array.from({ length: JOBS }, (_, i) =>
          scratch.start({
            job: `burst-${i}`,
            command: job('echo ok > "$MOUNTFLEET_SCRATCH/ok" && cat "$MOUNTFLEET_SCRATCH/ok"'),
            env: { AWS_ENDPOINT_URL: shared.endpoint },
          }),
        ),
      );
      const codes = await Promise.all(runs.map(async (r) => (await r.exited).code));
      const failed = runs.filter((_, i) => codes[i] !== 0).map((r) => r.stderr());
      expect(failed).toEqual([]);
      expect(shared.stats().byService.efs.faulted).toBeGreaterThan(0); // throttling did happen
      expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
    } finally {
      await shared.stop();
    }
  });
});
