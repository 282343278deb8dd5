/**
 * `down` and `status` trust nothing in the state file: a pid that is now another process is never
 * signalled, pids that address groups or init are refused, and a corrupt file is named with the fix.
 * The "unrelated process" is a real `sleep`; the "agent" is a `sleep` whose start time the state records.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentState } from '../../../core/agent/agent-state';
import { processAlive, processStartTime } from '../../../core/system/processes';
import { runCliInProcess as mountfleet } from '../../support/cli';

let runDir: string;
const children: ChildProcess[] = [];
const savedRunDir = process.env.MOUNTFLEET_RUN_DIR;

beforeEach(() => {
  runDir = mkdtempSync(join(tmpdir(), 'mf-down-'));
  process.env.MOUNTFLEET_RUN_DIR = runDir;
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  rmSync(runDir, { recursive: true, force: true });
  if (savedRunDir === undefined) delete process.env.MOUNTFLEET_RUN_DIR;
  else process.env.MOUNTFLEET_RUN_DIR = savedRunDir;
});

function startSleep(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}

function writeStateFile(fields: Record<string, unknown>): string {
  const state: Omit<AgentState, 'pid'> = {
    version: 1,
    mode: 'supervise',
    startedAt: new Date().toISOString(),
    instanceType: 'm6i.large',
    availabilityZoneId: 'use1-az4',
    mounts: [],
  };
  const file = join(runDir, 'state.json');
  writeFileSync(file, JSON.stringify({ ...state, ...fields }));
  return file;
}

test('down never signals a process that reused the agent pid', async () => {
  const unrelated = startSleep();
  // The agent that wrote this file started at another time: the pid has since been given to `sleep`.
  writeStateFile({ pid: unrelated, pidStartTime: processStartTime(unrelated)! - 1 });
  const r = await mountfleet('down', '--timeout', '1');
  expect(r.stderr).toContain(`pid ${unrelated}`);
  expect(r.stderr).toContain('now belongs to another process');
  expect(r.code).toBe(0);
  expect(processAlive(unrelated)).toBe(true);

  const status = await mountfleet('status', '--json');
  expect(status.code).toBe(3);
  expect(JSON.parse(status.stdout)).toMatchObject({ running: false });
});

test('down signals the process the state file names when its start time matches', async () => {
  const agent = startSleep();
  writeStateFile({ pid: agent, pidStartTime: processStartTime(agent) });
  const exited = new Promise((resolve) => children[0].once('exit', resolve));
  const r = await mountfleet('down', '--timeout', '5');
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`stopped agent pid ${agent}`);
  await exited;
});

test('down refuses a state file without a start time rather than guess', async () => {
  const unrelated = startSleep();
  const file = writeStateFile({ pid: unrelated });
  const r = await mountfleet('down', '--timeout', '1');
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`pid ${unrelated} in ${file} cannot be verified`);
  expect(processAlive(unrelated)).toBe(true);
});

test.each([0, 1, -1, 2.5, '42', null])('down and status refuse pid %j, naming the file', async (pid) => {
  const file = writeStateFile({ pid, pidStartTime: 1 });
  for (const command of ['down', 'status']) {
    const r = await mountfleet(command);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`agent state file ${file} has pid ${JSON.stringify(pid)}`);
    expect(r.stderr).toContain('if no agent is running, delete it');
  }
});

test.each([
  ['corrupt', '{"version": 1, "pid": 12', 'is not valid JSON'],
  [
    'BOM-prefixed',
    `\uFEFF${JSON.stringify({ version: 1, pid: 12345, mounts: [] })}`,
    'starts with a byte-order mark',
  ],
])('down and status name a %s state file and how to recover', async (_kind, text, problem) => {
  const file = join(runDir, 'state.json');
  writeFileSync(file, text);
  for (const command of ['down', 'status']) {
    const r = await mountfleet(command);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`agent state file ${file} ${problem}`);
    expect(r.stderr).toContain('`mountfleet up` writes a new one');
  }
});
