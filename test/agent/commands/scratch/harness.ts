/**
 * Drives the real `mountfleet scratch run` bundle against the emulator, a fault proxy of its own per run
 * (so runs can go in parallel, each with its own faults), the IMDS stand-in and the stand-in EFS mount
 * helper, and checks what the emulator has left afterwards.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeNetworkInterfacesCommand, RunInstancesCommand } from '@aws-sdk/client-ec2';
import {
  DescribeFileSystemsCommand,
  DescribeMountTargetsCommand,
  type FileSystemDescription,
} from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../../../../core/aws/clients';
import type { AgentConfigInput } from '../../../../core/contract/agent-config';
import { TAG_FLEET, TAG_JOB } from '../../../../core/contract/tags';
import { CLI_BUNDLE } from '../../../support/cli';
import { useEmulator } from '../../../support/emulator';
import { FaultProxy } from '../../../support/fault-proxy';
import { createNetwork, type TestNetwork } from '../../../support/fixtures';
import { ImdsStandIn } from '../../../support/imds';
import { tagValue } from '../../../../core/efs/fleet-file-systems';
import { MOUNT_HELPER_STANDIN, mountsUnder } from '../../../support/standins';

export const FLEET = 'scratch-it';

/**
 * An instance in the emulator (so the reaper can see it), the IMDS stand-in that speaks for it, and its
 * run dir (MOUNTFLEET_RUN_DIR: where its runs keep their locks).
 */
export interface TestInstance {
  readonly imds: ImdsStandIn;
  readonly instanceId: string;
  readonly runDir: string;
}

export async function launchInstance(net: TestNetwork): Promise<TestInstance> {
  const subnet = net.subnets[0];
  const out = await ec2Client({ maxAttempts: 1 }).send(
    new RunInstancesCommand({ ImageId: 'ami-12c6146b', MinCount: 1, MaxCount: 1, SubnetId: subnet.subnetId }),
  );
  const instanceId = out.Instances![0].InstanceId!;
  const imds = await ImdsStandIn.start({
    instanceId,
    availabilityZone: subnet.availabilityZone,
    availabilityZoneId: subnet.availabilityZoneId,
  });
  return { imds, instanceId, runDir: mkdtempSync(join(tmpdir(), 'mf-run-dir-')) };
}

/** Stops the instance's IMDS stand-in and removes its run dir. */
export async function stopInstance(instance: TestInstance): Promise<void> {
  await instance.imds.stop();
  rmSync(instance.runDir, { recursive: true, force: true });
}

export interface RunSpec {
  readonly job: string;
  readonly command: string[];
  readonly net: TestNetwork;
  readonly instance: TestInstance;
  readonly emulator: string;
  /** Faults for this run only. */
  readonly faults?: (proxy: FaultProxy) => void;
  readonly extraArgs?: string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Take fleet, subnet and security group from an agent.json (MOUNTFLEET_CONFIG) instead of flags. */
  readonly settingsFromConfig?: boolean;
}

export interface ScratchRun {
  readonly child: ChildProcess;
  readonly proxy: FaultProxy;
  /** A private temp dir: the mount path is `${dir}/scratch`, the helper's log `${dir}/helper.log`. */
  readonly dir: string;
  readonly path: string;
  stderr(): string;
  /** Resolves once stderr matches (rejects after timeoutMs). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The helper's calls, one argv array each. */
  helperCalls(): string[][];
}

/**
 * What a test gives for a run; the network, the instance and the emulator come from useScratchRuns()
 * (`instance` runs it on another instance, e.g. one from launchInstance).
 */
export type JobSpec = Omit<RunSpec, 'net' | 'instance' | 'emulator'> & { readonly instance?: TestInstance };

/** A job that records its pid in $TEST_DIR/job.pid (so killJob can find it), then runs `body`. */
export const job = (body: string): string[] => ['sh', '-c', `echo $$ > "$TEST_DIR/job.pid"; ${body}`];

/** A job that says `ready`, then waits until the test creates $TEST_DIR/go (go()), then runs `then`. */
export const waitForGo = (then = 'true') =>
  job(`echo ready; while [ ! -e "$TEST_DIR/go" ]; do sleep 0.1; done; ${then}`);
export const go = (run: ScratchRun) => writeFileSync(join(run.dir, 'go'), '');

/** True while `pid` runs (a zombie, dead but not yet reaped, does not count). */
export function liveProcess(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `check` holds, looking every 50 ms, for what no line or request announces (a process state,
 * a mount, a connection); fails after `timeoutMs` naming what it waited for.
 */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export async function startRun(spec: RunSpec): Promise<ScratchRun> {
  const proxy = await FaultProxy.start({ target: spec.emulator });
  spec.faults?.(proxy);
  const dir = mkdtempSync(join(tmpdir(), 'mf-scratch-'));
  const path = join(dir, 'scratch');
  const settingFlags = [
    '--fleet',
    FLEET,
    '--subnet',
    spec.net.subnets[0].subnetId,
    '--security-group',
    spec.net.securityGroupId,
  ];
  const configPath = join(dir, 'agent.json');
  if (spec.settingsFromConfig) {
    const config: AgentConfigInput = {
      version: 1,
      fleetId: FLEET,
      region: 'us-east-1',
      scratch: {
        securityGroupId: spec.net.securityGroupId,
        subnets: Object.fromEntries(spec.net.subnets.map((s) => [s.availabilityZoneId, s.subnetId])),
      },
    };
    writeFileSync(configPath, JSON.stringify(config));
  }
  // Without agent.json everything comes from flags, as on an instance outside any fleet.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ENDPOINT_URL: proxy.endpoint,
    AWS_EC2_METADATA_SERVICE_ENDPOINT: spec.instance.imds.endpoint,
    MOUNTFLEET_EFS_MOUNT_HELPER: MOUNT_HELPER_STANDIN,
    MOUNTFLEET_STANDIN_MOUNT_LOG: join(dir, 'helper.log'),
    MOUNTFLEET_RUN_DIR: spec.instance.runDir,
    TEST_DIR: dir,
    ...spec.env,
  };
  if (spec.settingsFromConfig) env.MOUNTFLEET_CONFIG = configPath;
  else delete env.MOUNTFLEET_CONFIG;
  const child = spawn(
    process.execPath,
    [
      CLI_BUNDLE,
      'scratch',
      'run',
      '--job',
      spec.job,
      ...(spec.settingsFromConfig ? [] : settingFlags),
      '--path',
      path,
      '--teardown-grace',
      '2',
      '--spot-poll-ms',
      '500',
      ...(spec.extraArgs ?? []),
      '--',
      ...spec.command,
    ],
    {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  // The job's stdout and mountfleet's stderr, in one transcript.
  const append = (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...waiters]) {
      if (w.pattern.test(stderr)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  // A job left running by a killed agent keeps the pipes open: wait for them briefly only.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      void Promise.race([closed, new Promise((r) => setTimeout(r, 500))]).then(() =>
        resolve({ code, signal }),
      );
    }),
  );
  return {
    child,
    proxy,
    dir,
    path,
    stderr: () => stderr,
    exited,
    waitFor(pattern, timeoutMs = 15_000) {
      if (pattern.test(stderr)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${pattern} in stderr:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          if (pattern.test(stderr)) resolve();
          else reject(new Error(`exited before ${pattern} appeared in stderr:\n${stderr}`));
        });
      });
    },
    helperCalls() {
      try {
        return readFileSync(join(dir, 'helper.log'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as string[]);
      } catch {
        return [];
      }
    },
  };
}

/** Unmounts anything left under the run's dir (a killed agent's mount), stops its proxy, removes the dir. */
export async function cleanUpRun(run: ScratchRun): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  killJob(run);
  await run.exited;
  for (const mountPoint of mountsUnder(run.dir)) spawnSync('umount', ['-l', mountPoint]);
  await run.proxy.stop();
  rmSync(run.dir, { recursive: true, force: true });
}

/** Kills the job of a run whose CMD wrote its pid to $TEST_DIR/job.pid (its process group). */
export function killJob(run: ScratchRun): void {
  try {
    const pid = Number(readFileSync(join(run.dir, 'job.pid'), 'utf8').trim());
    process.kill(-pid, 'SIGKILL');
  } catch {
    // no job, or already gone
  }
}

export { tagValue as fsTag } from '../../../../core/efs/fleet-file-systems';
export { MOUNT_HELPER_STANDIN, mountsUnder } from '../../../support/standins';

/** The emulator's file systems of this fleet (and job, when given). */
export async function fileSystemsOf(job?: string): Promise<FileSystemDescription[]> {
  const all =
    (await efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({}))).FileSystems ?? [];
  return all.filter(
    (fs) => tagValue(fs, TAG_FLEET) === FLEET && (job === undefined || tagValue(fs, TAG_JOB) === job),
  );
}

/** What a run may leave: file systems of the fleet (or job), their mount targets, and mount-target network interfaces in the VPC. */
export async function leftovers(net: TestNetwork, job?: string) {
  const efs = efsClient({ maxAttempts: 1 });
  const fileSystems = await fileSystemsOf(job);
  let mountTargets = 0;
  for (const fs of fileSystems) {
    mountTargets += (await efs.send(new DescribeMountTargetsCommand({ FileSystemId: fs.FileSystemId })))
      .MountTargets!.length;
  }
  const interfaces = (
    await ec2Client({ maxAttempts: 1 }).send(
      new DescribeNetworkInterfacesCommand({ Filters: [{ Name: 'vpc-id', Values: [net.vpcId] }] }),
    )
  ).NetworkInterfaces!.filter((n) => n.Attachment?.InstanceId === undefined).length;
  return { fileSystems: fileSystems.map((f) => f.FileSystemId), mountTargets, interfaces };
}

export const NOTHING_LEFT = { fileSystems: [], mountTargets: 0, interfaces: 0 };

export interface ScratchRuns {
  /** This worker's emulator (behind each run's own fault proxy). */
  readonly emulator: string;
  /** This test's network and instance, made fresh before each test. */
  readonly net: TestNetwork;
  readonly instance: TestInstance;
  /** Starts a run on this test's network and instance; it is cleaned up after the test. */
  start(spec: JobSpec): Promise<ScratchRun>;
  /** Cleans up runs now, as when their instance goes away: the given ones, or all of this test's. */
  cleanUp(...runs: ScratchRun[]): Promise<void>;
}

/**
 * Jest hooks for a `scratch run` test file: the emulator, and before each test a network of `subnetCount`
 * subnets with one instance in it; after each test every run still around is cleaned up.
 */
export function useScratchRuns(subnetCount: number): ScratchRuns {
  const emu = useEmulator();
  let current: { net: TestNetwork; instance: TestInstance } | undefined;
  const runs: ScratchRun[] = [];
  const now = () => {
    if (!current) throw new Error('useScratchRuns: the network is made in beforeEach; use it inside tests');
    return current;
  };

  beforeEach(async () => {
    const net = await createNetwork(ec2Client({ maxAttempts: 1 }), subnetCount);
    current = { net, instance: await launchInstance(net) };
  });
  afterEach(async () => {
    await Promise.all(runs.splice(0).map(cleanUpRun));
    if (current) await stopInstance(current.instance);
    current = undefined;
  });

  return {
    emulator: emu.endpoint,
    get net() {
      return now().net;
    },
    get instance() {
      return now().instance;
    },
    async start(spec) {
      const run = await startRun({ ...now(), emulator: emu.endpoint, ...spec });
      runs.push(run);
      return run;
    },
    async cleanUp(...chosen) {
      const gone = chosen.length > 0 ? chosen : [...runs];
      for (const run of gone) runs.splice(runs.indexOf(run), 1);
      await Promise.all(gone.map(cleanUpRun));
    },
  };
}

export type HeldPhase = 'creating' | 'waiting' | 'mount-target' | 'mounting' | 'tearing-down';

/** A job to start, and the transcript line that says its run has reached the phase it is held in. */
export interface PhaseHold {
  readonly spec: JobSpec;
  readonly when: RegExp;
  /**
   * The EFS call being held, when the phase's line is printed before that call is sent: signalWhenHeld waits
   * until it has reached the proxy (a busy machine can take longer than the settle time to send it).
   */
  readonly heldCall?: string;
}

const AVAILABLE = /("LifeCycleState"\s*:\s*)"available"/g;

/** Makes the proxy show `available` as `creating` in an EFS answer: moto has no `creating` state. */
const showCreating = (body: string) => body.replace(AVAILABLE, '$1"creating"');

/**
 * A run of `jobId` (whose job is `true`) held in a phase long enough to signal or kill it there: for
 * `seconds` by a delayed request or mount, or (waiting, mount-target) for good, by never becoming available.
 */
export function holdIn(phase: HeldPhase, jobId: string, seconds: number): PhaseHold {
  const spec = { job: jobId, command: job('true') };
  const delayed = (operation: string) => (p: FaultProxy) =>
    p.addRule({ service: 'efs', operation, fault: { kind: 'delay', ms: seconds * 1000 } });
  switch (phase) {
    case 'creating':
      return {
        spec: { ...spec, faults: delayed('CreateFileSystem') },
        when: /\[creating\]/,
        heldCall: 'CreateFileSystem',
      };
    case 'waiting':
      return {
        spec: {
          ...spec,
          faults: (p) => {
            for (const operation of ['CreateFileSystem', 'DescribeFileSystems']) {
              p.addRule({ service: 'efs', operation, fault: { kind: 'rewrite', rewrite: showCreating } });
            }
          },
        },
        when: /waiting for file system fs-\w+ to become available \(creating/,
      };
    case 'mount-target':
      return {
        spec: {
          ...spec,
          faults: (p) =>
            p.addRule({
              service: 'efs',
              operation: 'DescribeMountTargets',
              match: (r) => r.query.has('MountTargetId'),
              fault: { kind: 'rewrite', rewrite: showCreating },
            }),
        },
        when: /waiting for mount target fsmt-\w+ to become available \(creating/,
      };
    case 'mounting':
      return {
        spec: { ...spec, env: { MOUNTFLEET_STANDIN_MOUNT_DELAY_SECONDS: String(seconds) } },
        when: /\[mounting\]/,
      };
    case 'tearing-down':
      return { spec: { ...spec, faults: delayed('DeleteMountTarget') }, when: /\[tearing-down\]/ };
  }
}

/** Starts a run, waits until it reaches `hold.when` (and `settleMs` more), then sends the agent `signal`. */
export async function signalWhenHeld(
  runs: ScratchRuns,
  hold: PhaseHold,
  signal: NodeJS.Signals,
  settleMs: number,
): Promise<ScratchRun> {
  const run = await runs.start(hold.spec);
  await run.waitFor(hold.when);
  const giveUpAt = Date.now() + 10_000;
  while (hold.heldCall && run.proxy.arrived('efs', hold.heldCall) === 0 && Date.now() < giveUpAt)
    await sleep(20);
  await sleep(settleMs);
  run.child.kill(signal);
  await run.exited;
  return run;
}
