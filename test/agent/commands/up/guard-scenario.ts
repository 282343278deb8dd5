/**
 * Runs INSIDE private mount and PID namespaces, started by guard-harness.ts: `mountfleet up --supervise` (the bundled
 * CLI) on a Batch host (agent.json `containers`, a stand-in task cgroup) on the real Mountpoint against moto behind
 * the fault proxy, with job containers played by the container stand-in (binds as Docker makes them), each reading
 * the fleet path in a loop and printing what it sees ("<start ms> <end ms> <st_dev of the path> ok|fail <error>"):
 *   1. kill -9 of the plain mount's Mountpoint while a container reads it: the container is ended, the ready file
 *      goes and comes back, and a container started after the restart reads on;
 *   2. the zone's Express bucket black-holed while a container reads through the Express-cached process: after
 *      the switch that container is ended, and one started after the switch (on the standby) reads on;
 *   3. the zone answers again (the agent switches back): the containers started after each event still run;
 *   4. SIGTERM: the ready file goes, and the containers left on the mounts are ended.
 * Prints one JSON document (a GuardResult) on stdout, also when a step fails (`error` says which). The fault proxy
 * runs in this process: nothing here touches a mount synchronously.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroup2Root } from '../../../../core/system/cgroups';
import { readMountinfo } from '../../../../core/system/mountinfo';
import { answerExpressCreateSession, keepExpressChecksums } from '../../../support/express-session-standin';
import { FaultProxy } from '../../../support/fault-proxy';
import { ImdsStandIn } from '../../../support/imds';
import { startContainerStandIn, type ContainerStandIn } from '../../../support/container-standin';
import { emulatorMountS3 } from '../../../support/real-mountpoint';
import type { ContainerSeen, GuardResult, GuardScenario } from './guard-harness';

interface State {
  mounts: { path: string; name: string; active: string; processes: { role: string; pid?: number }[] }[];
  containers?: { ready: boolean; ended: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `test` (an exception counts as "not yet") until it holds; bounded by `timeoutMs`. */
async function waitFor(
  what: string,
  test: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const ok = await Promise.resolve()
      .then(test)
      .catch(() => false);
    if (ok) return Date.now();
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The job: reads the dataset's files through `dir` over and over, one line per try. */
const READER = String.raw`
n=0
while :; do
  f=$(printf '%s/part-%03d.bin' "$DIR" $((n % COUNT)))
  s=$(date +%s%3N)
  if err=$(cat "$f" 2>&1 >/dev/null); then r=ok; else r="fail $err"; fi
  echo "$s $(date +%s%3N) $(stat -c %d "$DIR" 2>/dev/null || echo -) $r"
  n=$((n + 1))
  sleep 0.05
done
`;

interface Reader {
  readonly container: ContainerStandIn;
  /** When its first read succeeded, and the st_dev it saw. */
  readonly firstOk: Promise<{ at: number; dev: number }>;
}

function lines(c: ContainerStandIn): { start: number; end: number; dev: string; result: string }[] {
  return c
    .output()
    .split('\n')
    .map((l) => /^(\d+) (\d+) (\S+) (.*)$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ start: Number(m[1]), end: Number(m[2]), dev: m[3], result: m[4] }));
}

/** What the container's reads saw from `since` until it ended at `endedAt`. */
function seen(c: ContainerStandIn, since: number, endedAt: number): ContainerSeen {
  const after = lines(c).filter((l) => l.start >= since);
  const failures = after.filter((l) => l.result !== 'ok');
  const last = lines(c).at(-1);
  return {
    tries: after.length,
    ok: after.length - failures.length,
    errors: [...new Set(failures.map((l) => l.result.replace(/^fail .*: /, '')))],
    slowestMs: Math.max(0, ...after.map((l) => l.end - l.start)),
    // The read under way when it was killed: how long it had waited by then.
    unansweredMs: last ? endedAt - last.end : 0,
  };
}

async function main(): Promise<GuardResult> {
  const s = JSON.parse(process.env.GUARD_SCENARIO!) as GuardScenario;
  const result: GuardResult = { agentLog: '' };
  const proxy = await FaultProxy.start({ target: s.motoEndpoint });
  answerExpressCreateSession(proxy);
  keepExpressChecksums(proxy);
  const imds = await ImdsStandIn.start({ instanceType: 'm6i.2xlarge', availabilityZoneId: 'use1-az4' });
  const root = cgroup2Root();
  if (!root) throw new Error('no cgroup v2 file system is mounted here');
  const taskCgroup = join(root, s.taskCgroup);
  mkdirSync(taskCgroup, { recursive: true });
  // FUSE's control file system, as systemd mounts it on an instance (this private namespace's own mount, unless
  // the machine has it mounted already, as a systemd host does).
  if (!readMountinfo().some((e) => e.fsType === 'fusectl'))
    execFileSync('mount', ['-t', 'fusectl', 'fusectl', '/sys/fs/fuse/connections']);
  const runDir = join(s.dir, 'run');
  const readyFile = join(runDir, 'mounts-ready');
  const agent = spawn(
    process.execPath,
    [s.cliBundle, 'up', '--supervise', '--no-install', '--config', s.config],
    {
      env: {
        ...process.env,
        AWS_ENDPOINT_URL: proxy.endpoint,
        AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint,
        AWS_EC2_METADATA_DISABLED: 'true',
        MOUNTFLEET_MOUNT_S3: emulatorMountS3(s.dir, s.mountS3, proxy.endpoint),
        MOUNTFLEET_RUN_DIR: runDir,
        MOUNTFLEET_SYSTEM_ROOT: join(s.dir, 'root'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  agent.stderr!.on('data', (d: Buffer) => (result.agentLog += d.toString()));
  const agentExit = new Promise<number | null>((r) => agent.once('exit', (code) => r(code)));
  const state = () => JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as State;
  const ready = () => existsSync(readyFile);
  const containers: ContainerStandIn[] = [];
  let onXzJob: Reader | undefined;
  let started = 0;
  const reader = (path: string): Reader => {
    const name = `job${++started}`;
    const container = startContainerStandIn({
      name,
      command: ['sh', '-c', READER],
      environment: { DIR: path, COUNT: String(s.files) },
      binds: [{ hostPath: path, containerPath: path, readOnly: true }],
      dir: join(s.dir, 'containers', name),
      taskCgroup,
    });
    containers.push(container);
    const firstOk = (async () => {
      const at = await waitFor(
        `${name}'s first read`,
        () => lines(container).some((l) => l.result === 'ok'),
        30_000,
      );
      return { at, dev: Number(lines(container).find((l) => l.result === 'ok')!.dev) };
    })();
    return { container, firstOk };
  };
  /** When the agent logged the container's end (its time), if it has. */
  const guardEnded = (c: ContainerStandIn) =>
    result.agentLog
      .split('\n')
      .filter((l) => l.includes('"event":"container-ended"') && l.includes(`"cgroup":"${c.cgroup}"`))
      .map((l) => Date.parse((JSON.parse(l) as { time: string }).time))[0];
  /** When the container exited; a container not ended within 30 s fails the scenario. */
  const ended = (c: ContainerStandIn) =>
    Promise.race([
      c.exited.then(() => Date.now()),
      sleep(30_000).then(() => Promise.reject(new Error(`${c.cgroup} was not ended within 30 s`))),
    ]);
  try {
    await waitFor('the ready file', ready, 60_000);
    result.readyFileHoldsAgentPid = readFileSync(readyFile, 'utf8') === `${agent.pid}\n`;
    const [plain, cached] = s.mounts;
    const devOf = async (path: string) => (await stat(path)).dev;
    const mountName = state().mounts.find((m) => m.path === cached)!.name;
    const xzDev = await devOf(join(runDir, mountName, 'xz'));
    const directDev = await devOf(join(runDir, mountName, 'direct'));

    // 1. kill -9 of the plain mount's Mountpoint while a job reads it.
    const first = reader(plain);
    await first.firstOk;
    const killedPid = state().mounts.find((m) => m.path === plain)!.processes[0].pid!;
    const killedAt = Date.now();
    process.kill(killedPid, 'SIGKILL');
    const readyGone = waitFor('the ready file to go', () => !ready(), 10_000);
    const endedAt = await ended(first.container);
    await waitFor('the guard to have logged it', () => guardEnded(first.container) !== undefined, 5000);
    const guardAt = guardEnded(first.container)!;
    const readyBack = await waitFor('the ready file to come back', ready, 30_000);
    result.restart = {
      readyGoneMs: (await readyGone) - killedAt,
      guardMs: guardAt - killedAt,
      endedMs: endedAt - killedAt,
      readyBackMs: readyBack - killedAt,
      signal: first.container.signal(),
      stderr: first.container.stderr(),
      seen: seen(first.container, killedAt, endedAt),
    };
    const afterRestart = reader(plain);
    result.afterRestartFirstOk = (await afterRestart.firstOk).at > 0;

    // 2. The zone's Express bucket goes dark while a job reads through the Express-cached process.
    const onXz = reader(cached);
    onXzJob = onXz;
    result.heldOnXz = (await onXz.firstOk).dev === xzDev;
    const darkAt = Date.now();
    const dark = proxy.addRule({
      service: 's3',
      match: (r) => r.path === `/${s.expressBucket}` || r.path.startsWith(`/${s.expressBucket}/`),
      fault: { kind: 'blackhole' },
    });
    const switched = waitFor(
      'the switch to the standby',
      () => state().mounts.find((m) => m.path === cached)!.active === 'direct',
      30_000,
    );
    const zoneReadyGone = waitFor('the ready file to go', () => !ready(), 30_000);
    await waitFor('the guard to end the job', () => guardEnded(onXz.container) !== undefined, 30_000);
    const zoneGuardAt = guardEnded(onXz.container)!;
    const zoneReadyBack = await waitFor('the ready file to come back', ready, 30_000);
    const onDirect = reader(cached);
    result.afterSwitchOnDirect = (await onDirect.firstOk).dev === directDev;
    // Killed, the job's container waits for the read the Express-cached process took before the zone went dark,
    // until the agent aborts that process's FUSE connection and stops it. Measured with the zone still dark.
    const xzEndedAt = await Promise.race([
      onXz.container.exited.then(() => Date.now()),
      sleep(s.zoneDarkMs).then(() => undefined),
    ]);
    result.zone = {
      switchedMs: (await switched) - darkAt,
      readyGoneMs: (await zoneReadyGone) - darkAt,
      guardMs: zoneGuardAt - darkAt,
      ...(xzEndedAt ? { endedMs: xzEndedAt - darkAt } : {}),
      readyBackMs: zoneReadyBack - darkAt,
      signal: onXz.container.signal(),
      stderr: onXz.container.stderr(),
      seen: seen(onXz.container, darkAt, xzEndedAt ?? Date.now()),
    };

    // 3. The zone answers again: the agent switches back; the jobs started after each event read on meanwhile.
    proxy.removeRule(dark);
    await waitFor(
      'the switch back',
      () => state().mounts.find((m) => m.path === cached)!.active === 'xz',
      30_000,
    );
    await waitFor('the ready file after the switch back', ready, 30_000);
    const readsSince = (r: Reader, since: number) =>
      lines(r.container).filter((l) => l.start >= since && l.result === 'ok').length;
    const now = Date.now();
    // One more good read each after the switch back (and so after the sweeps that followed it).
    await waitFor(
      'reads after the switch back',
      () => readsSince(afterRestart, now) > 0 && readsSince(onDirect, now) > 0,
      20_000,
    );
    result.survivors = {
      afterRestart: afterRestart.container.signal() === null && readsSince(afterRestart, 0) > 0,
      afterSwitch: onDirect.container.signal() === null && readsSince(onDirect, 0) > 0,
    };
    result.containersInState = state().containers;

    // 4. SIGTERM: no ready file, and no job left on the mounts that go.
    agent.kill('SIGTERM');
    await agentExit;
    result.readyFileAfterStop = ready();
    result.afterStop = await Promise.all(
      [afterRestart, onDirect].map(async (r) => {
        await r.container.exited;
        return { signal: r.container.signal(), stderr: r.container.stderr() };
      }),
    );
  } catch (e) {
    result.error = (e as Error).message;
  } finally {
    if (agent.exitCode === null && agent.signalCode === null) {
      agent.kill('SIGTERM');
      const killer = setTimeout(() => agent.kill('SIGKILL'), 20_000);
      await agentExit;
      clearTimeout(killer);
    }
    containers.forEach((c) => c.kill());
    // Once the agent has stopped Mountpoint, a read left waiting in a killed container gets its answer (the FUSE
    // connection is gone), and the container's last process exits.
    await Promise.all(containers.map((c) => c.emptied));
    result.zoneJobFinally = onXzJob?.container.signal() ?? undefined;
    rmdirSync(taskCgroup);
    rmdirSync(join(root, s.taskCgroup.split('/')[0]));
    await proxy.stop();
    await imds.stop();
  }
  return result;
}

void main().then((r) => writeFileSync(1, `${JSON.stringify(r)}\n`));
