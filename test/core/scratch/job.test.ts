/**
 * The job runner's systemd scope, through the stand-ins for systemd-run and systemctl (no systemd here; they
 * use a real cgroup v2 directory): a process that leaves the process group with setsid is still found and
 * stopped, and a missing or non-executable program keeps the status a shell would give.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processGroupMembers } from '../../../core/processes';
import { startJob, systemdScopeFor } from '../../../core/scratch/job';
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
  const exit = await job.exited;
  expect(exit.status).toBe(status);
  expect(exit.startError).toContain(program);
});
