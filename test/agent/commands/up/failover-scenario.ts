/**
 * Runs INSIDE a private mount namespace (`unshare -m --propagation private`), driven by
 * failover.test.ts and bench/failover.ts over stdin/stdout (one JSON object per line):
 *
 *   → {"event":"ready", ...}     agent up, a file held open on the Express-cached path
 *   ← "dark"                      the driver has black-holed the Express endpoint
 *   → {"event":"switched","ms":N} first new open that landed on the cache-less standby
 *   → {"event":"held-ok", ...}    the held handle still reads the right bytes
 *   ← "light"                     the driver has cleared the fault
 *   → {"event":"back","ms":N}     first new open on the Express-cached process again
 *   → {"event":"restarted",...}   after SIGKILL of that process: restarted and serving the path again
 *   → {"event":"done", ...}       agent stopped by SIGTERM; nothing left mounted
 *
 * Which process an open reached is told by st_dev: each stand-in mount is a file system of its own.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const [cliBundle, configPath, userPath, fileName] = process.argv.slice(2);
const runDir = process.env.MOUNTFLEET_RUN_DIR!;
const emit = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function mountName(): string {
  const state = JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as {
    mounts: { name: string }[];
  };
  return state.mounts[0].name;
}

/** Opens the file anew through the user's path and says which process served it. */
function openDevice(): number {
  const fd = openSync(join(userPath, fileName), 'r');
  try {
    return fstatSync(fd).dev;
  } finally {
    closeSync(fd);
  }
}

/** Mounts the agent should have removed on exit: its process mounts and the binds on the user's path. */
function leftMounted(): number {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.includes(runDir) || l.split(' ')[4] === userPath).length;
}

async function waitFor(what: string, test: () => boolean, timeoutMs: number, everyMs = 50): Promise<number> {
  const started = Date.now();
  while (!test()) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
  return Date.now() - started;
}

async function main(): Promise<void> {
  const agent = spawn(
    process.execPath,
    [cliBundle, 'up', '--supervise', '--no-install', '--config', configPath],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let agentLog = '';
  agent.stderr!.on('data', (d: Buffer) => (agentLog += d.toString()));
  const agentExit = new Promise<number | null>((r) => agent.once('exit', (code) => r(code)));
  const lines = createInterface({ input: process.stdin });
  const commands: string[] = [];
  let wake: () => void = () => {};
  lines.on('line', (l) => {
    commands.push(l.trim());
    wake();
  });
  const command = async (name: string) => {
    while (!commands.includes(name)) await new Promise<void>((r) => (wake = r));
  };
  try {
    await waitFor(
      'the agent state',
      () => {
        if (agent.exitCode !== null) throw new Error(`the agent exited with ${agent.exitCode}`);
        return existsSync(join(runDir, 'state.json')) && mountName() !== '';
      },
      60_000,
    );
    const name = mountName();
    // -1 while the directory does not exist yet (the zone was dark at boot: no Express-cached process).
    const devOf = (path: string) => (existsSync(path) ? statSync(path).dev : -1);
    const xzDev = () => devOf(join(runDir, name, 'xz'));
    const directDev = () => statSync(join(runDir, name, 'direct')).dev;
    await waitFor('the user path', () => existsSync(join(userPath, fileName)), 60_000);
    if (process.env.SCENARIO_STANDBY_FIRST) {
      // The zone was dark before the agent started, or its Express-cached process failed to start:
      // the agent must mount on the standby, then move over.
      emit({
        event: 'ready',
        heldOnExpress: false,
        xzDev: xzDev(),
        directDev: directDev(),
        newOpenDev: openDevice(),
      });
      await command('light');
      emit({
        event: 'back',
        ms: await waitFor('new opens on the Express-cached process', () => openDevice() === xzDev(), 30_000),
      });
      const readState = () =>
        JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as { mounts: { active: string }[] };
      await waitFor('the state to record the switch', () => readState().mounts[0].active === 'xz', 5000);
      const state = readState();
      agent.kill('SIGTERM');
      const code = await agentExit;
      emit({ event: 'done', agentExit: code, leftMounted: leftMounted(), state, agentLog });
      return;
    }
    const expected = readFileSync(join(userPath, fileName));
    const held = openSync(join(userPath, fileName), 'r');
    const heldDev = fstatSync(held).dev;
    emit({
      event: 'ready',
      heldOnExpress: heldDev === xzDev(),
      xzDev: xzDev(),
      directDev: directDev(),
      newOpenDev: openDevice(),
    });

    await command('dark');
    const switchedMs = await waitFor('new opens on the standby', () => openDevice() === directDev(), 30_000);
    emit({ event: 'switched', ms: switchedMs });
    const buffer = Buffer.alloc(expected.length);
    const read = readSync(held, buffer, 0, buffer.length, 0);
    emit({
      event: 'held-ok',
      bytes: read,
      same: buffer.subarray(0, read).equals(expected),
      stillOnExpress: fstatSync(held).dev === xzDev(),
    });

    await command('light');
    const backMs = await waitFor(
      'new opens on the Express-cached process',
      () => openDevice() === xzDev(),
      30_000,
    );
    emit({ event: 'back', ms: backMs });
    closeSync(held);

    // A Mountpoint process that dies is restarted, and the user's path is re-pointed at its new mount.
    const readState = () =>
      JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as {
        mounts: { processes: { role: string; pid?: number; restarts: number; running: boolean }[] }[];
      };
    const xzPid = readState().mounts[0].processes.find((p) => p.role === 'xz')!.pid!;
    process.kill(xzPid, 'SIGKILL');
    const restartedMs = await waitFor(
      'the restarted Express-cached process to serve the path',
      () => {
        const xz = readState().mounts[0].processes.find((p) => p.role === 'xz')!;
        if (xz.pid === xzPid || !xz.running) return false;
        try {
          return openDevice() === xzDev();
        } catch {
          return false;
        }
      },
      30_000,
      100,
    );
    emit({ event: 'restarted', ms: restartedMs, killedPid: xzPid });
    const state = JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as Record<string, unknown>;

    agent.kill('SIGTERM');
    const code = await agentExit;
    emit({ event: 'done', agentExit: code, leftMounted: leftMounted(), state, agentLog });
  } catch (e) {
    agent.kill('SIGTERM');
    await agentExit;
    emit({ event: 'error', message: (e as Error).message, agentLog });
  } finally {
    lines.close();
  }
}

void main();
