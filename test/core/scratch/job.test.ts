/**
 * The job runner's systemd scope, through the stand-ins for systemd-run and systemctl (no systemd here; they
 * use a real cgroup v2 directory): a process that leaves the process group with setsid is still found and
 * stopped, and a missing or non-executable program keeps the status a shell would give; and the gate a job is
 * held at until the runner's watcher knows it.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processGroupMembers } from '../../../core/system/processes';
import { startJob, systemdScopeFor } from '../../../core/scratch/job';
import { REPO_ROOT } from '../../support/moto';
import { removeEmptySystemdStandinScopes, SYSTEMD_STANDIN_BIN } from '../../support/standins';

const env: NodeJS.ProcessEnv = { ...process.env, MOUNTFLEET_SYSTEMD_BIN: SYSTEMD_STANDIN_BIN };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(() => removeEmptySystemdStandinScopes());

test('a scope is used only where systemd runs (or its stand-ins are named), with a valid unit name', () => {
  expect(systemdScopeFor('fleet', 'job', { PATH: process.env.PATH })).toBeUndefined(); // no /run/systemd here
  const scope = systemdScopeFor('fleet', 'team/a=b+c@d', env)!;
  expect(scope.unit).toBe(`mountfleet-scratch-fleet-team_a_b_c_d-${process.pid}.scope`);
  expect(scope.systemdRun).toBe(join(SYSTEMD_STANDIN_BIN, 'systemd-run'));
});

test("a process that left the process group (setsid) is still the job's, and is stopped with it", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mf-job-'));
  const scope = systemdScopeFor('fleet', 'escaping', env)!;
  const job = startJob('sh', ['-c', `setsid sleep 300 & echo $! > ${dir}/escaped.pid`], { env, scope });
  job.openGate();
  expect((await job.exited).status).toBe(0);
  const escaped = Number(readFileSync(join(dir, 'escaped.pid'), 'utf8'));
  // Once setsid has run, the process group alone has lost it.
  for (let i = 0; i < 50 && processGroupMembers(job.pid!).length > 0; i++) await sleep(20);
  expect(processGroupMembers(job.pid!)).toEqual([]);
  expect(job.remaining()).toEqual([escaped]);
  expect(job.kill('SIGTERM')).toBe(true);
  for (let i = 0; i < 50 && job.remaining().length > 0; i++) await sleep(20);
  expect(job.remaining()).toEqual([]);
});

test.each([
  ['a program that does not exist', '/nonexistent/program', 127],
  ['a file that is not executable', 'not-executable', 126],
])('%s keeps the shell status under a scope (%s)', async (_name, program, status) => {
  const dir = mkdtempSync(join(tmpdir(), 'mf-job-'));
  writeFileSync(join(dir, 'not-executable'), '#!/bin/sh\n');
  chmodSync(join(dir, 'not-executable'), 0o644);
  const scope = systemdScopeFor('fleet', 'missing', env)!;
  const job = startJob(program, [], { env: { ...env, PATH: `${dir}:${env.PATH}` }, scope });
  job.openGate();
  const exit = await job.exited;
  expect(exit.status).toBe(status);
  expect(exit.startError).toContain(program);
});

test('a job held at its gate never runs CMD when its starter dies before opening the gate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mf-job-'));
  try {
    // A starter process that starts a job and is SIGKILLed before it opens the gate.
    const code =
      `const { startJob } = require(${JSON.stringify(join(REPO_ROOT, 'core/scratch/job.ts'))});` +
      `const job = startJob('sh', ['-c', 'touch ${dir}/ran'], { env: process.env });` +
      `process.stdout.write(String(job.pid), () => process.kill(process.pid, 'SIGKILL'));`;
    const out = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', code], { cwd: REPO_ROOT });
    const gatePid = Number(out.stdout.toString());
    expect(gatePid).toBeGreaterThan(0);
    // The gate sees its pipe close without the line and exits (125) instead of becoming CMD.
    const deadline = Date.now() + 10_000;
    while (existsSync(`/proc/${gatePid}`) && !/^[ZX]/.test(statOf(gatePid)) && Date.now() < deadline)
      await sleep(20);
    expect(existsSync(`/proc/${gatePid}`) && !/^[ZX]/.test(statOf(gatePid))).toBe(false);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The state letter of a process (`S`, `R`, `Z`…), '' once it is gone. */
function statOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2);
  } catch {
    return '';
  }
}
