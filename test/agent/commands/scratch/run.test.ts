/**
 * `mountfleet scratch run` end to end: the real CLI bundle against the emulator (through a fault proxy per
 * run), the IMDS stand-in, and the stand-in EFS mount helper (which mounts a real tmpfs). Every scenario
 * ends with no file system, no mount target and no mount-target network interface left in the emulator.
 * The bundle must be built first (`node scripts/bundle.mjs`; scripts/test.sh does it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeMountTargetsCommand, DescribeMountTargetSecurityGroupsCommand } from '@aws-sdk/client-efs';
import { efsClient } from '../../../../core/aws/clients';
import { TAG_FLEET, TAG_JOB, TAG_OWNER_INSTANCE, TAG_RUN } from '../../../../core/contract/tags';
import {
  FLEET,
  fileSystemsOf,
  fsTag,
  holdIn,
  job,
  leftovers,
  mountsUnder,
  NOTHING_LEFT,
  signalWhenHeld,
  useScratchRuns,
  type PhaseHold,
} from './harness';

jest.setTimeout(60_000);

describe('mountfleet scratch run', () => {
  const scratch = useScratchRuns(2);

  it('creates an encrypted One Zone file system, mounts it over TLS at the mount target IP, runs the job, deletes everything', async () => {
    const requestBodies: Record<string, string> = {};
    const run = await scratch.start({
      job: 'normal-1',
      faults: (proxy) =>
        proxy.addRule({
          service: 'efs',
          operation: 'CreateFileSystem',
          match: (r) => ((requestBodies.create = r.body ?? ''), false),
          fault: { kind: 'delay', ms: 0 },
        }),
      command: job(
        'echo "job=$MOUNTFLEET_JOB"; grep " $MOUNTFLEET_SCRATCH " /proc/self/mountinfo; ' +
          'head -c 1048576 /dev/zero > "$MOUNTFLEET_SCRATCH/data" && echo ready; ' +
          'while [ ! -e "$TEST_DIR/go" ]; do sleep 0.05; done',
      ),
    });
    await run.waitFor(/^ready$/m);

    // While the job runs: one file system, shaped as the contract says.
    const [fs, ...others] = await fileSystemsOf('normal-1');
    expect(others).toEqual([]);
    expect(fs).toMatchObject({
      CreationToken: expect.stringMatching(new RegExp(`^mf/${FLEET}/r\\d{8}t\\d{6}-[0-9a-f]{16}$`)),
      Encrypted: true,
      ThroughputMode: 'bursting',
      PerformanceMode: 'generalPurpose',
      AvailabilityZoneName: scratch.net.subnets[0].availabilityZone,
      LifeCycleState: 'available',
    });
    expect(fsTag(fs, TAG_FLEET)).toBe(FLEET);
    expect(fsTag(fs, TAG_OWNER_INSTANCE)).toBe(scratch.instance.instanceId);
    expect(fsTag(fs, TAG_JOB)).toBe('normal-1');
    expect(`mf/${FLEET}/${fsTag(fs, TAG_RUN)}`).toBe(fs.CreationToken); // the run, named in its token
    expect(fsTag(fs, 'Name')).toBe(`mountfleet-scratch-${FLEET}-normal-1`);
    expect(JSON.parse(requestBodies.create)).toMatchObject({ Backup: false, Encrypted: true });

    const efs = efsClient({ maxAttempts: 1 });
    const [mt, ...moreTargets] = (
      await efs.send(new DescribeMountTargetsCommand({ FileSystemId: fs.FileSystemId }))
    ).MountTargets!;
    expect(moreTargets).toEqual([]);
    expect(mt.SubnetId).toBe(scratch.net.subnets[0].subnetId);
    expect(mt.IpAddress).toMatch(/^10\.0\.0\.\d+$/);
    expect(
      (await efs.send(new DescribeMountTargetSecurityGroupsCommand({ MountTargetId: mt.MountTargetId })))
        .SecurityGroups,
    ).toEqual([scratch.net.securityGroupId]);

    // The helper got what the real mount.efs needs, and the job wrote to a separate (tmpfs) file system.
    expect(run.helperCalls()).toEqual([
      [`${fs.FileSystemId}:/`, run.path, '-o', `tls,mounttargetip=${mt.IpAddress},noresvport`],
    ]);
    expect(run.stderr()).toContain('job=normal-1');
    expect(run.stderr()).toMatch(new RegExp(` ${run.path} .* - tmpfs efs-standin:${fs.FileSystemId} `));

    writeFileSync(join(run.dir, 'go'), '');
    expect((await run.exited).code).toBe(0);
    expect(run.stderr()).toContain(`deleted ${fs.FileSystemId} and its mount target`);
    expect(mountsUnder(run.dir)).toEqual([]);
    expect(existsSync(run.path)).toBe(false); // the mount directory it made is gone too
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it("takes fleet, the zone's subnet (by AZ ID) and the security group from agent.json", async () => {
    const run = await scratch.start({ job: 'from-config', command: job('true'), settingsFromConfig: true });
    expect((await run.exited).code).toBe(0);
    expect(run.stderr()).toContain(`job from-config (run r`);
    expect(run.stderr()).toContain(`of fleet ${FLEET} in ${scratch.net.subnets[0].availabilityZone}`);
    expect(run.stderr()).toContain(
      `[mount-target] in ${scratch.net.subnets[0].subnetId} with security group ${scratch.net.securityGroupId}`,
    );
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it("passes the job's exit status through: a failure, a death by signal, a missing program", async () => {
    const [failing, killed, missing] = await Promise.all([
      scratch.start({ job: 'fails', command: job('exit 7') }),
      scratch.start({ job: 'killed', command: job('kill -KILL $$') }),
      scratch.start({ job: 'missing', command: ['/nonexistent/program'] }),
    ]);
    expect((await failing.exited).code).toBe(7);
    expect((await killed.exited).code).toBe(128 + 9);
    expect((await missing.exited).code).toBe(127);
    expect(missing.stderr()).toContain('/nonexistent/program: not found');
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('tears down after SIGTERM (or SIGINT) in every phase, and exits as a signalled job would', async () => {
    const cases: Array<PhaseHold & { phase: string; signal?: NodeJS.Signals; exit: number }> = [
      { phase: 'creating', ...holdIn('creating', 'term-creating', 1.5), exit: 143 },
      // The file system never becomes available (moto has no `creating`: the proxy shows one).
      { phase: 'waiting', ...holdIn('waiting', 'term-waiting', 1.5), exit: 143 },
      { phase: 'mount-target', ...holdIn('mount-target', 'term-mount-target', 1.5), exit: 143 },
      { phase: 'mounting', ...holdIn('mounting', 'term-mounting', 1.5), exit: 143 },
      {
        phase: 'running',
        spec: { job: 'term-running', command: job('exec sleep 30') },
        when: /\[running\]/,
        exit: 143,
      },
      {
        // SIGINT reaches the job as SIGINT; its handler's status passes through.
        phase: 'running (SIGINT, job handles it)',
        spec: {
          job: 'int-running',
          command: job("trap 'exit 42' INT; echo int-trapped; while :; do sleep 0.1; done"),
        },
        when: /^int-trapped$/m,
        signal: 'SIGINT',
        exit: 42,
      },
      // Teardown goes on to the end; the job had already succeeded.
      { phase: 'tearing-down', ...holdIn('tearing-down', 'term-teardown', 1.5), exit: 0 },
    ];

    const outcomes = await Promise.all(
      cases.map(async (c) => {
        const run = await signalWhenHeld(scratch, c, c.signal ?? 'SIGTERM', 300);
        return {
          phase: c.phase,
          code: (await run.exited).code,
          mounts: mountsUnder(run.dir),
          left: await leftovers(scratch.net, c.spec.job),
          run,
        };
      }),
    );
    for (const [i, o] of outcomes.entries()) {
      const expected = {
        phase: o.phase,
        code: cases[i].exit,
        mounts: [],
        left: { ...NOTHING_LEFT, interfaces: o.left.interfaces },
      };
      expect({ phase: o.phase, code: o.code, mounts: o.mounts, left: o.left }).toEqual(expected);
      expect(o.run.stderr()).toMatch(/deleted fs-\w+/);
    }
    expect(outcomes.find((o) => o.phase === 'mounting')!.run.helperCalls()).toHaveLength(1);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('kills a job that ignores SIGTERM once its grace period is over, then tears down', async () => {
    const run = await scratch.start({
      job: 'stubborn',
      command: job("trap '' TERM; echo term-ignored; sleep 30"),
    });
    await run.waitFor(/^term-ignored$/m);
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(128 + 9);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(2000); // --teardown-grace 2
    expect(run.stderr()).toContain('did not exit within 2 s: killing it');
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('stops the job and tears down when IMDS announces a Spot interruption', async () => {
    const run = await scratch.start({
      job: 'spot-1',
      command: job(
        `trap 'echo got-term > "$TEST_DIR/term"; exit 0' TERM; echo term-trapped; while :; do sleep 0.1; done`,
      ),
    });
    await run.waitFor(/^term-trapped$/m);
    const noticed = Date.now();
    scratch.instance.imds.scheduleSpotInterruption({
      action: 'terminate',
      time: new Date(Date.now() + 120_000),
    });
    const { code } = await run.exited;
    const seconds = (Date.now() - noticed) / 1000;

    expect(code).toBe(0); // the job's own status: it handled SIGTERM and exited 0
    expect(existsSync(join(run.dir, 'term'))).toBe(true);
    expect(run.stderr()).toMatch(/Spot interruption notice: terminate at \S+Z; stopping the job/);
    expect(seconds).toBeLessThan(10);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('rides out throttling and 5xx errors during create and during teardown', async () => {
    // One throttle each (the SDK's adaptive retry then also slows the client down) and 5xx answers.
    const [create, teardown] = await Promise.all([
      scratch.start({
        job: 'faults-create',
        command: job('true'),
        faults: (p) => {
          p.addRule({ service: 'efs', operation: 'CreateFileSystem', fault: { kind: 'throttle' }, times: 1 });
          p.addRule({ service: 'efs', operation: 'CreateFileSystem', fault: { kind: '5xx' }, times: 1 });
          p.addRule({
            service: 'efs',
            operation: 'CreateMountTarget',
            fault: { kind: '5xx', status: 503 },
            times: 2,
          });
        },
      }),
      scratch.start({
        job: 'faults-teardown',
        command: job('true'),
        faults: (p) => {
          p.addRule({
            service: 'efs',
            operation: 'DeleteMountTarget',
            fault: { kind: 'throttle' },
            times: 1,
          });
          // More failures than the SDK's default 5 attempts: scratch run's clients make 10.
          p.addRule({ service: 'efs', operation: 'DeleteFileSystem', fault: { kind: '5xx' }, times: 6 });
        },
      }),
    ]);
    expect((await create.exited).code).toBe(0);
    expect((await teardown.exited).code).toBe(0);
    expect(create.proxy.count('efs', 'CreateFileSystem')).toBe(3);
    expect(create.proxy.count('efs', 'CreateMountTarget')).toBe(3);
    expect(teardown.proxy.count('efs', 'DeleteMountTarget')).toBe(2);
    expect(teardown.stderr()).not.toMatch(/teardown attempt 1 failed/);
    expect(teardown.proxy.count('efs', 'DeleteFileSystem')).toBe(7);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('refuses a --summary it cannot write before any AWS call, and fails a run whose summary was not written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-summary-'));
    try {
      const refused = await scratch.start({
        job: 'summary-dir',
        command: job('echo ran'),
        extraArgs: ['--summary', dir],
      });
      expect((await refused.exited).code).toBe(2);
      expect(refused.stderr()).toContain(
        `--summary ${dir}: is a directory: give the path of a file to write`,
      );
      expect(refused.stderr()).not.toContain('ran');
      expect(refused.proxy.stats().total.requests).toBe(0);

      // Room for the file, none for its content: the write after the job fails.
      const full = join(dir, 'full');
      mkdirSync(full);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
      try {
        const run = await scratch.start({
          job: 'summary-full',
          command: job(`head -c 1048576 /dev/zero > ${join(full, 'filler')}; echo ran`),
          extraArgs: ['--summary', join(full, 'summary.json')],
        });
        expect((await run.exited).code).toBe(1);
        expect(run.stderr()).toContain('ran');
        expect(run.stderr()).toContain(`--summary ${join(full, 'summary.json')} was not written: ENOSPC`);
        expect(run.stderr()).toContain('the run succeeded but its --summary was not written: exiting 1');
      } finally {
        execFileSync('umount', [full]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });

  it('warns when --expected-io exceeds the burst credit, and refuses with --strict before touching AWS', async () => {
    const [warned, refused] = await Promise.all([
      scratch.start({ job: 'big-io', command: job('true'), extraArgs: ['--expected-io', '3TiB'] }),
      scratch.start({
        job: 'big-io-strict',
        command: job('true'),
        extraArgs: ['--expected-io', '3TiB', '--strict'],
      }),
    ]);
    expect((await warned.exited).code).toBe(0);
    expect(warned.stderr()).toMatch(
      /WARNING: expected I\/O 3\.00 TiB exceeds the 2\.1 TiB initial burst credit/,
    );
    expect(warned.stderr()).toMatch(/EBS gp3.*elastic throughput.*split the work into 2 jobs/s);
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toContain('refusing (--strict)');
    expect(refused.proxy.stats().total.requests).toBe(0);
    expect(await leftovers(scratch.net)).toEqual(NOTHING_LEFT);
  });
});
