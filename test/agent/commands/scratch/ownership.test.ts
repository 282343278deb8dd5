/**
 * One run, one file system: the cases in which runs, re-runs, duplicates and the reaper used to share (and
 * delete) a job's scratch, each played for real (the CLI bundle, the emulator behind a fault proxy per run,
 * the IMDS stand-in, the stand-in EFS mount helper). In every one, each run mounts and deletes only the file
 * system it created, and a file system in use is never deleted. Needs the built bundle.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TagResourceCommand } from '@aws-sdk/client-efs';
import { efsClient } from '../../../../core/aws/clients';
import { TAG_MARKED_IDLE_AT, TAG_RUN } from '../../../../core/contract/tags';
import { runCli } from '../../../support/cli';
import { createScratchFileSystem } from '../../../support/fixtures';
import {
  FLEET,
  fileSystemsOf,
  fsTag,
  job,
  launchInstance,
  leftovers,
  mountsUnder,
  NOTHING_LEFT,
  stopInstance,
  useScratchRuns,
  waitUntil,
  waitForGo,
  go,
  liveProcess,
  type ScratchRun,
} from './harness';

jest.setTimeout(120_000);

/** The file system a run says it created. */
function createdBy(run: ScratchRun): string {
  const id = /created file system (fs-\w+)/.exec(run.stderr())?.[1];
  if (!id) throw new Error(`no file system created:\n${run.stderr()}`);
  return id;
}

/** The file systems the stand-in mount helper mounted for a run (FS_ID:/ is its first argument). */
const mountedBy = (run: ScratchRun) => run.helperCalls().map((argv) => argv[0].replace(/:\/$/, ''));

/** The pid of the runner watcher of a job (runner-watch.ts: `sh -c SCRIPT mountfleet-runner-watch … JOB`). */
function watcherOf(jobId: string): number {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv.includes('mountfleet-runner-watch') && argv.at(-2) === jobId) return Number(pid);
  }
  throw new Error(`no watcher for job ${jobId}`);
}

/** Ids of this fleet's file systems in the emulator now. */
const existing = async () => (await fileSystemsOf()).map((fs) => fs.FileSystemId!).sort();

/** One `mountfleet reap` past the grace period against the emulator, as the scheduled Lambda runs it. */
async function reapNow(emulator: string) {
  const out = await runCli(['reap', '--fleet', FLEET, '--grace-minutes', '0', '--json'], {
    env: { AWS_ENDPOINT_URL: emulator },
  });
  expect({ code: out.code, stderr: out.code === 0 ? '' : out.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(out.stdout) as { deleted: string[]; kept: Array<{ id: string; reason: string }> };
}

describe('scratch: one run, one file system', () => {
  const scratch = useScratchRuns(1);

  it("two instances running an orphaned job's id at once each make their own, even when a tag write is slow", async () => {
    // An orphan of job J with the job-keyed CreationToken earlier versions used, its owner long gone:
    // exactly what both runs used to adopt.
    const orphan = await createScratchFileSystem(
      efsClient({ maxAttempts: 1 }),
      { fleet: FLEET, job: 'J', owner: 'i-0dead00000000beef', mountTargetSubnet: scratch.net.subnets[0] },
      `mf/${FLEET}/J`,
    );
    const other = await launchInstance(scratch.net);
    try {
      const slowTags = (p: Parameters<NonNullable<Parameters<typeof scratch.start>[0]['faults']>>[0]) =>
        p.addRule({ service: 'efs', operation: 'TagResource', fault: { kind: 'delay', ms: 4000 } });
      const runs = [
        await scratch.start({ job: 'J', command: waitForGo('echo one-done') }),
        await scratch.start({
          job: 'J',
          command: waitForGo('echo two-done'),
          instance: other,
          faults: slowTags,
        }),
      ];
      await Promise.all(runs.map((r) => r.waitFor(/^ready$/m)));
      const [a, b] = runs.map(createdBy);
      expect(new Set([a, b, orphan]).size).toBe(3);
      expect(runs.map(mountedBy)).toEqual([[a], [b]]);

      // The first finishes and tears down while the second still runs: only its own file system goes.
      go(runs[0]);
      expect((await runs[0].exited).code).toBe(0);
      expect(runs[0].stderr()).toContain(`deleted ${a}`);
      expect(await existing()).toEqual([b, orphan].sort());
      go(runs[1]);
      expect((await runs[1].exited).code).toBe(0);
      expect(runs[1].stderr()).toContain(`deleted ${b}`);
      // Nothing touched the orphan: it is the reaper's.
      expect(await existing()).toEqual([orphan]);
      // No run tagged, mounted or deleted anything of it (those calls name it in their path).
      for (const run of runs) expect(run.proxy.requests().filter((r) => r.path.includes(orphan))).toEqual([]);
    } finally {
      await stopInstance(other);
    }
  });

  it("a re-run after a crashed teardown gets a new file system; the reaper deletes the old one, not the re-run's", async () => {
    // Run 1's teardown stalls after its teardown mark (DeleteMountTarget never answers), and it is killed.
    const first = await scratch.start({
      job: 'J',
      command: job('true'),
      faults: (p) =>
        p.addRule({ service: 'efs', operation: 'DeleteMountTarget', fault: { kind: 'blackhole' } }),
    });
    await first.waitFor(/\[tearing-down\]/);
    await waitUntil(
      () => first.proxy.arrived('efs', 'DeleteMountTarget') > 0,
      'the stalled DeleteMountTarget',
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const old = createdBy(first);
    // An earlier reaper pass also marked it idle.
    await efsClient({ maxAttempts: 1 }).send(
      new TagResourceCommand({
        ResourceId: old,
        Tags: [{ Key: TAG_MARKED_IDLE_AT, Value: '2026-01-01T00:00:00Z' }],
      }),
    );

    const rerun = await scratch.start({ job: 'J', command: waitForGo('echo rerun-done') });
    await rerun.waitFor(/^ready$/m);
    const fresh = createdBy(rerun);
    expect(fresh).not.toBe(old);

    const report = await reapNow(scratch.emulator);
    expect(report.deleted).toEqual([old]);
    expect(report.kept.map((k) => k.id)).toEqual([fresh]);

    go(rerun);
    expect((await rerun.exited).code).toBe(0);
    expect(rerun.stderr()).toContain('rerun-done');
    expect(rerun.stderr()).toContain(`deleted ${fresh}`);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('the same job id in two containers of one instance (each its own run dir) gets two file systems', async () => {
    const container = { ...scratch.instance, runDir: mkdtempSync(join(tmpdir(), 'mf-run-dir-')) };
    try {
      const runs = [
        await scratch.start({ job: 'batch-7', command: waitForGo() }),
        await scratch.start({ job: 'batch-7', command: waitForGo(), instance: container }),
      ];
      await Promise.all(runs.map((r) => r.waitFor(/^ready$/m)));
      const [a, b] = runs.map(createdBy);
      expect(a).not.toBe(b);
      go(runs[0]);
      expect((await runs[0].exited).code).toBe(0);
      expect(await existing()).toEqual([b]); // the second's is untouched while it runs
      go(runs[1]);
      expect((await runs[1].exited).code).toBe(0);
      expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
    } finally {
      rmSync(container.runDir, { recursive: true, force: true });
    }
  });

  it('a runner killed mid-job does not leave the job running: the watcher stops it and unmounts; a retry makes its own', async () => {
    const first = await scratch.start({ job: 'J', command: job('echo started; exec sleep 300') });
    await first.waitFor(/^started$/m);
    const jobPid = Number(readFileSync(join(first.dir, 'job.pid'), 'utf8'));
    const old = createdBy(first);
    first.child.kill('SIGKILL');
    await waitUntil(() => !liveProcess(jobPid), 'the orphaned job to be stopped');
    await waitUntil(() => mountsUnder(first.dir).length === 0, 'the dead run to be unmounted');
    await first.exited;
    expect(first.stderr()).toContain('the runner of job J died: stopping the job');

    // A retry on another path: its own file system; the old one is left for the reaper, not deleted by it.
    // --wait-lock: the watcher holds the job's locks until it is done, then the retry goes ahead.
    const retry = await scratch.start({
      job: 'J',
      command: job('echo retried'),
      extraArgs: ['--wait-lock=30'],
    });
    expect((await retry.exited).code).toBe(0);
    const fresh = createdBy(retry);
    expect(fresh).not.toBe(old);
    expect(retry.stderr()).toContain(`deleted ${fresh}`);
    expect(await existing()).toEqual([old]);
    const [left] = await fileSystemsOf();
    expect(fsTag(left, TAG_RUN)).toMatch(/^r\d{8}t\d{6}-[0-9a-f]{16}$/);
  });

  it('a runner killed during its last CloudWatch read, after the job, still has its mount taken down', async () => {
    const run = await scratch.start({
      job: 'late-kill',
      command: job('echo finished'),
      // The guard's last read after the job is held: the runner is killed while teardown has not begun.
      faults: (p) =>
        p.addRule({
          service: 'cloudwatch',
          operation: 'GetMetricData',
          fault: { kind: 'delay', ms: 60_000 },
        }),
    });
    await run.waitFor(/job exited with status 0/);
    await waitUntil(() => run.proxy.arrived('cloudwatch', 'GetMetricData') > 0, 'the last CloudWatch read');
    expect(mountsUnder(run.dir)).toHaveLength(1);
    run.child.kill('SIGKILL');
    await run.exited;
    await waitUntil(() => mountsUnder(run.dir).length === 0, 'the dead run to be unmounted');
    expect(run.stderr()).toContain(
      'the runner of job late-kill died before its teardown was over: unmounting',
    );
  });

  it('a runner SIGKILLed while its watcher gets SIGTERM (systemd stopping the unit): the job still gets its grace', async () => {
    const run = await scratch.start({
      job: 'unit-stop',
      command: job(`trap 'echo checkpointed; exit 0' TERM; echo started; while :; do sleep 0.1; done`),
      extraArgs: ['--teardown-grace', '30'],
    });
    await run.waitFor(/^started$/m);
    const watcher = watcherOf('unit-stop');
    run.child.kill('SIGKILL');
    process.kill(watcher, 'SIGTERM');
    await run.waitFor(/^checkpointed$/m);
    await waitUntil(() => mountsUnder(run.dir).length === 0, 'the dead run to be unmounted');
    // It unmounts, then exits: wait for the exit itself (a busy machine put a moment between the two).
    await waitUntil(() => !liveProcess(watcher), 'the watcher to exit after its cleanup');
  });

  it("refuses a path inside, or around, another run's path (exit 75, holder named) before any AWS call", async () => {
    const outer = await scratch.start({ job: 'outer', command: waitForGo() });
    await outer.waitFor(/^ready$/m);
    for (const [jobId, path] of [
      ['inner', join(outer.path, 'inner')],
      ['around', outer.dir],
    ]) {
      const refused = await scratch.start({
        job: jobId,
        command: job('echo ran'),
        extraArgs: ['--path', path],
      });
      expect((await refused.exited).code).toBe(75);
      expect(refused.stderr()).toContain(
        `refusing: --path ${path} nests with the path of job outer at ${outer.path} (pid ${outer.child.pid}`,
      );
      expect(refused.proxy.stats().total.requests).toBe(0);
    }
    go(outer);
    expect((await outer.exited).code).toBe(0);
    expect(mountsUnder(outer.dir)).toEqual([]);
  });
});

describe('scratch run: local problems are named before any AWS call', () => {
  const scratch = useScratchRuns(1);

  it('resolves a symlinked --path, and refuses one that resolves to a system directory', async () => {
    const links = mkdtempSync(join(tmpdir(), 'mf-links-'));
    try {
      symlinkSync('/etc', join(links, 'to-etc'));
      const refused = await scratch.start({
        job: 'sym',
        command: job('true'),
        extraArgs: ['--path', join(links, 'to-etc')],
      });
      expect((await refused.exited).code).toBe(2);
      expect(refused.stderr()).toContain(
        `--path ${join(links, 'to-etc')} resolves through a symlink to /etc, which`,
      );
      expect(refused.proxy.stats().total.requests).toBe(0);

      const real = join(links, 'real');
      mkdirSync(real);
      symlinkSync(real, join(links, 'to-real'));
      const run = await scratch.start({
        job: 'sym2',
        command: job('echo "scratch=$MOUNTFLEET_SCRATCH"'),
        extraArgs: ['--path', join(links, 'to-real', 'scratch')],
      });
      expect((await run.exited).code).toBe(0);
      expect(run.stderr()).toContain(`scratch=${join(real, 'scratch')}`);
      expect(run.helperCalls()[0][1]).toBe(join(real, 'scratch'));
    } finally {
      rmSync(links, { recursive: true, force: true });
    }
  });

  it('refuses a --path below a directory another user can change (exit 2, the directory named) before any AWS call', async () => {
    const home = mkdtempSync(join(tmpdir(), 'mf-home-'));
    try {
      const user = join(home, 'user');
      mkdirSync(user);
      chownSync(user, 1000, 1000);
      const refused = await scratch.start({
        job: 'user-dir',
        command: job('echo ran'),
        extraArgs: ['--path', join(user, 'scratch')],
      });
      expect((await refused.exited).code).toBe(2);
      expect(refused.stderr()).toContain(
        `${user} belongs to uid 1000: that user can replace what is below it`,
      );
      expect(refused.stderr()).not.toContain('ran');
      expect(refused.proxy.stats().total.requests).toBe(0);
      expect(existsSync(join(user, 'scratch'))).toBe(false);

      chmodSync(home, 0o777);
      const open = await scratch.start({
        job: 'open-dir',
        command: job('echo ran'),
        extraArgs: ['--path', join(home, 'scratch')],
      });
      expect((await open.exited).code).toBe(2);
      expect(open.stderr()).toContain(`${home} is writable by other users (mode 0777)`);
      expect(open.proxy.stats().total.requests).toBe(0);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses right before the mount a --path re-pointed while the file system was provisioned, and deletes it', async () => {
    let held = 0;
    const run = await scratch.start({
      job: 're-pointed',
      command: job('echo ran'),
      // The mount target shows `creating` until the test has re-pointed the path.
      faults: (p) => {
        held = p.addRule({
          service: 'efs',
          operation: 'DescribeMountTargets',
          match: (r) => r.query.has('MountTargetId'),
          fault: {
            kind: 'rewrite',
            rewrite: (body) => body.replace(/("LifeCycleState"\s*:\s*)"available"/g, '$1"creating"'),
          },
        });
      },
    });
    await run.waitFor(/waiting for mount target fsmt-\w+ to become available \(creating/);
    // What root (the only one who can, below root-owned parents) might do meanwhile: /etc stands in as `elsewhere`.
    const elsewhere = join(run.dir, 'elsewhere');
    mkdirSync(elsewhere);
    renameSync(run.path, join(run.dir, 'checked'));
    symlinkSync(elsewhere, run.path);
    run.proxy.removeRule(held);
    expect((await run.exited).code).toBe(1);
    expect(run.stderr()).toContain(`--path ${run.path} changed after it was checked:`);
    expect(run.stderr()).not.toContain('ran');
    expect(run.helperCalls()).toEqual([]);
    expect(mountsUnder(run.dir)).toEqual([]);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('names a read-only run dir and a --path that cannot be created, and creates nothing', async () => {
    const ro = mkdtempSync(join(tmpdir(), 'mf-ro-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', ro]);
    try {
      const runDir = await scratch.start({
        job: 'ro-1',
        command: job('true'),
        env: { MOUNTFLEET_RUN_DIR: join(ro, 'run') },
      });
      expect((await runDir.exited).code).toBe(2);
      expect(runDir.stderr()).toMatch(
        new RegExp(
          `cannot write ${join(ro, 'run', 'scratch-locks')} \\(EROFS: .*set MOUNTFLEET_RUN_DIR to another directory`,
        ),
      );
      expect(runDir.proxy.stats().total.requests).toBe(0);

      const path = await scratch.start({
        job: 'ro-2',
        command: job('true'),
        extraArgs: ['--path', join(ro, 'scratch')],
      });
      expect((await path.exited).code).toBe(2);
      expect(path.stderr()).toContain(`--path ${join(ro, 'scratch')} cannot be created (EROFS:`);
      expect(path.proxy.stats().total.requests).toBe(0);
    } finally {
      execFileSync('umount', [ro]);
      rmSync(ro, { recursive: true, force: true });
    }
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('names a full run dir', async () => {
    const full = mkdtempSync(join(tmpdir(), 'mf-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
    try {
      mkdirSync(join(full, 'scratch-locks'));
      // Fill the file system, then make it read-only for new inodes' data: the lock file's holder write fails.
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(1024 * 1024));
      } catch {
        // ENOSPC: full, as intended
      }
      const run = await scratch.start({
        job: 'full',
        command: job('true'),
        env: { MOUNTFLEET_RUN_DIR: full },
      });
      expect((await run.exited).code).toBe(2);
      expect(run.stderr()).toMatch(/cannot write .*\.lock \(ENOSPC: /);
      expect(run.proxy.stats().total.requests).toBe(0);
      expect(existsSync(run.path)).toBe(false);
    } finally {
      execFileSync('umount', [full]);
      rmSync(full, { recursive: true, force: true });
    }
  });
});
