/**
 * Runs INSIDE a private mount namespace (`unshare -m --propagation private`), started by
 * supervise-harness.ts: `mountfleet up --supervise` (the bundled CLI) on the real Mountpoint against moto
 * behind the fault proxy, then
 *   1. kill -9 of the first mount's process: how long until its path serves again;
 *   2. reads every seeded object through the mounts;
 *   3. the second mount's process killed while its bucket refuses every request (403): the restarts fail,
 *      back off, and must be logged;
 *   4. `mountfleet down` while that restart is backing off: how long, and what is left.
 * Prints one JSON document (a SuperviseResult) on stdout, also when a step fails (`error` says which).
 * The fault proxy runs in this process, so everything that touches a mount is asynchronous: a blocking
 * read would stop the event loop that forwards Mountpoint's own requests.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FaultProxy } from '../../../support/fault-proxy';
import { ImdsStandIn } from '../../../support/imds';
import { emulatorMountS3 } from '../../../support/real-mountpoint';
import { AgentMountMetrics, s3CountBetween } from '../../../../core/agent/mount-metrics-reading';
import type { SuperviseResult, SuperviseScenario } from './supervise-harness';

interface StateProcess {
  role: string;
  pid?: number;
  running: boolean;
  restarts: number;
}
interface State {
  mounts: { path: string; bucket: string; processes: StateProcess[] }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `test` (an exception counts as "not yet": a dead mount, a half-written state) until it holds. */
async function waitFor(
  what: string,
  test: () => boolean | Promise<boolean>,
  timeoutMs: number,
  giveUp: () => string | undefined = () => undefined,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const ok = await Promise.resolve()
      .then(test)
      .catch(() => false);
    if (ok) return Date.now() - started;
    const reason =
      giveUp() ?? (Date.now() - started > timeoutMs ? `timed out after ${timeoutMs} ms` : undefined);
    if (reason) throw new Error(`${reason} waiting for ${what}`);
    await sleep(20);
  }
}

async function files(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Processes whose command line names `dir` (a Mountpoint process is called with its mount point). */
function namedAfter(dir: string): number {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false; // gone meanwhile
      }
    }).length;
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

async function main(): Promise<SuperviseResult> {
  const s = JSON.parse(process.env.SUPERVISE_SCENARIO!) as SuperviseScenario;
  const result: SuperviseResult = { mounts: s.mounts.length, agentLog: '' };
  const proxy = await FaultProxy.start({ target: s.motoEndpoint });
  const imds = await ImdsStandIn.start({ instanceType: 'm6i.2xlarge', availabilityZoneId: 'use1-az4' });
  const runDir = join(s.dir, 'run');
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL: proxy.endpoint,
    AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint,
    AWS_EC2_METADATA_DISABLED: 'true',
    // Exports every second instead of every 10: each reading of the agent's S3 counts waits for one.
    MOUNTFLEET_MOUNT_S3: emulatorMountS3(s.dir, s.mountS3, proxy.endpoint, { otlpExportIntervalSeconds: 1 }),
    MOUNTFLEET_RUN_DIR: runDir,
    MOUNTFLEET_SYSTEM_ROOT: join(s.dir, 'root'),
  };
  const cli = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [s.cliBundle, ...args], { env }, (_, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
  const state = () => JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as State;
  const proc = (i: number) => state().mounts[i].processes[0];
  const pids = new Set<number>();
  const agent = spawn(
    process.execPath,
    [s.cliBundle, 'up', '--supervise', '--no-install', '--config', s.config],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  agent.stderr!.on('data', (d: Buffer) => (result.agentLog += d.toString()));
  const agentExit = new Promise<{ code: number | null; at: number }>((r) =>
    agent.once('exit', (code) => r({ code, at: Date.now() })),
  );
  const logLines = (event: string, key: string) =>
    result.agentLog.split('\n').filter((l) => l.includes(`"event":"${event}"`) && l.includes(key));
  try {
    result.upMs = await waitFor(
      'every mount to be up',
      () => state().mounts.every((m) => m.processes.every((p) => p.running)),
      60_000,
      () => (agent.exitCode !== null ? `up exited with ${agent.exitCode}` : undefined),
    );
    state().mounts.forEach((m) => m.processes.forEach((p) => p.pid && pids.add(p.pid)));

    // 0. A second `up --supervise` with the same run dir refuses and leaves the first's mounts and state alone.
    // Without the metric totals, which the first agent updates at every export of its Mountpoint processes.
    const withoutTotals = () =>
      JSON.stringify(state(), (key, value: unknown) => (key === 'metrics' ? undefined : value));
    const before = withoutTotals();
    const secondUp = await cli('up', '--supervise', '--no-install', '--config', s.config);
    result.secondUp = {
      code: secondUp.code,
      stderr: secondUp.stderr,
      stateUnchanged: withoutTotals() === before,
    };

    // 1. kill -9 → the path serves again from a new process. Nothing has touched the mount yet, so the
    //    kernel has no attributes of its root cached: every access to the dead mount fails (ENOTCONN).
    const [first, second] = s.mounts;
    const killed = proc(0).pid!;
    process.kill(killed, 'SIGKILL');
    result.restartMs = await waitFor(
      `${first.path} to serve again after kill -9`,
      async () =>
        proc(0).pid !== killed &&
        proc(0).running &&
        (await readFile((await files(first.path))[0])).length > 0,
      15_000,
    );
    pids.add(proc(0).pid!);

    result.read = {};
    for (const m of s.mounts)
      for (const f of await files(m.path))
        result.read[`${m.bucket}/${f.slice(m.path.length + 1)}`] = await sha256(f);
    const status = JSON.parse((await cli('status', '--json')).stdout) as { state: State };
    result.restartsCounted = status.state.mounts[0].processes[0].restarts;
    result.restartLogged = logLines('process-ready', `/main`).some((l) => l.includes('"restarts":1'));

    // 1b. S3 counts per mount: the agent's (from Mountpoint's own exports) against the proxy's.
    const proxyCounts = () =>
      Object.fromEntries(
        Object.entries(proxy.stats().byOperation)
          .filter(([key]) => key.startsWith('s3:'))
          .map(([key, v]) => [key.slice(3), v.requests]),
      );
    const counter = AgentMountMetrics.find(second.path, runDir);
    const countedBefore = await counter.read();
    proxy.resetStats();
    for (const f of await files(second.path)) await sha256(f);
    result.s3Counts = { agent: s3CountBetween(countedBefore, await counter.read()), proxy: proxyCounts() };
    /** Runs a command with the proxy's counts reset: its JSON output and the GetObjects the proxy saw. */
    const counted = async (...args: string[]) => {
      proxy.resetStats();
      const r = await cli(...args);
      if (r.code !== 0) throw new Error(`${args.slice(0, 2).join(' ')} exited ${r.code}: ${r.stderr}`);
      return { json: JSON.parse(r.stdout), proxyGetObject: proxyCounts().GetObject ?? 0 };
    };
    const train = ['--epochs', '2', '--step-ms', '0', '--batch-size', '2', '--workers', '2', '--json'];
    result.benchTrain = await counted('bench', 'train', '--path', second.path, ...train);
    // The cached mount: its files were all read above, so the epochs are served from the local cache.
    result.cachedBenchTrain = await counted('bench', 'train', '--path', first.path, ...train);
    result.warm = await counted('warm', '--path', second.path, '--json');

    // 2. a restart that keeps failing: logged each time, backing off.
    const bucketPath = `/${second.bucket}`;
    proxy.addRule({
      service: 's3',
      match: (r) => r.path === bucketPath || r.path.startsWith(`${bucketPath}/`),
      fault: { kind: 'error', status: 403, code: 'AccessDenied' },
    });
    process.kill(proc(1).pid!, 'SIGKILL');
    // Five failures: the next try is 4-8 s away when `down` comes.
    await waitFor('five failed restarts', () => logLines('process-restart-failed', '').length >= 5, 30_000);
    result.restartFailures = logLines('process-restart-failed', '');

    // 3. down, with that restart's backoff pending.
    const started = Date.now();
    const down = await cli('down');
    result.downMs = Date.now() - started;
    result.downExit = down.code;
    result.downStderr = down.stderr;
  } catch (e) {
    result.error = (e as Error).message;
    agent.kill('SIGTERM');
  } finally {
    const killer = setTimeout(() => agent.kill('SIGKILL'), 20_000);
    const exit = await agentExit;
    clearTimeout(killer);
    result.agentExit = exit.code;
    const signalled = logLines('signal', 'SIGTERM')[0];
    if (signalled)
      result.agentStopMs = exit.at - Date.parse((JSON.parse(signalled) as { time: string }).time);
    result.leftMounted = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.split(' ')[4]?.startsWith(s.dir)).length;
    result.leftProcesses = [...pids].filter((pid) => existsSync(`/proc/${pid}`)).length + namedAfter(s.dir);
    await proxy.stop();
    await imds.stop();
  }
  return result;
}

void main().then((r) => writeFileSync(1, `${JSON.stringify(r)}\n`));
