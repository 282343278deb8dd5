/**
 * What `status` and `down` ask of the agent through its state file: whether it runs, and stopping it. The
 * "agent" is a real process whose pid and start time the state records (a `sleep`, or a shell that exits on
 * SIGTERM); the CLI's wording of each outcome: test/agent/commands/down.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentStatus, stopAgent } from '../../../core/agent/agent-control';
import { processStartTime } from '../../../core/system/processes';

let runDir: string;
const children: ChildProcess[] = [];
beforeEach(() => (runDir = mkdtempSync(join(tmpdir(), 'mf-agent-control-'))));
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  rmSync(runDir, { recursive: true, force: true });
});

/** A process standing in for the agent, once it runs; `ignoreTerm` makes it outlive a SIGTERM. */
async function startAgentStandIn(ignoreTerm = false): Promise<number> {
  const script = `${ignoreTerm ? "trap '' TERM; " : ''}echo ready; while :; do sleep 1; done`;
  const child = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  return child.pid!;
}

function writeState(fields: Record<string, unknown>): void {
  const state = {
    version: 1,
    mode: 'supervise',
    startedAt: new Date().toISOString(),
    instanceType: 'm6i.large',
    availabilityZoneId: 'use1-az4',
    mounts: [{ path: '/mnt/data' }, { path: '/mnt/out' }],
    ...fields,
  };
  writeFileSync(join(runDir, 'state.json'), JSON.stringify(state));
}

test('no state file: not running, and nothing to stop', async () => {
  expect(agentStatus(runDir)).toEqual({ running: false });
  await expect(stopAgent(runDir, 1)).resolves.toEqual({ outcome: 'not-running' });
});

test('a running agent is reported with its state, then stopped: SIGTERM, and the wait until it is gone', async () => {
  const pid = await startAgentStandIn();
  writeState({ pid, pidStartTime: processStartTime(pid) });
  expect(agentStatus(runDir)).toMatchObject({ running: true, state: { pid } });
  await expect(stopAgent(runDir, 10)).resolves.toEqual({
    outcome: 'stopped',
    pid,
    mounts: ['/mnt/data', '/mnt/out'],
  });
});

test('an agent still running when the time is up is reported so', async () => {
  const pid = await startAgentStandIn(true);
  writeState({ pid, pidStartTime: processStartTime(pid) });
  await expect(stopAgent(runDir, 1)).resolves.toEqual({ outcome: 'still-running', pid });
});

test('a pid the state file cannot tie to the agent is never signalled', async () => {
  const pid = await startAgentStandIn();
  const stateFile = join(runDir, 'state.json');
  writeState({ pid, pidStartTime: processStartTime(pid)! + 1 });
  await expect(stopAgent(runDir, 1)).resolves.toEqual({ outcome: 'pid-reused', pid, stateFile });
  writeState({ pid });
  // Without a start time `status` trusts the pid, `down` does not signal it.
  expect(agentStatus(runDir).running).toBe(true);
  await expect(stopAgent(runDir, 1)).resolves.toEqual({ outcome: 'unverified', pid, stateFile });
  expect(children[0].exitCode).toBeNull();
});
