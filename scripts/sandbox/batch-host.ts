/**
 * A played Batch host with the fleet's real mounts: the Batch stack's own agent.json (from its launch template; its
 * Mountpoint paths moved under the host's root, its task cgroup one of the sandbox's own), `mountfleet up
 * --supervise` behind the fault proxy with an IMDS stand-in in the queue's zone. The agent runs in the sandbox's
 * mount namespace, its mounts under the work directory (detached at cleanup), so that the job containers the
 * sandbox starts bind them, as Docker binds a host's paths. Its guard finds those containers in the task cgroup.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MOUNTS_READY_FILE } from '../../core/contract/batch-host';
import { readMountinfo } from '../../core/system/mountinfo';
import { cgroup2Root } from '../../core/system/cgroups';
import { CLI_BUNDLE } from '../../test/support/cli';
import type { FaultProxy } from '../../test/support/fault-proxy';
import { ImdsStandIn } from '../../test/support/imds';
import { emulatorMountS3 } from '../../test/support/real-mountpoint';
import { STANDIN } from '../../test/agent/commands/up/failover-harness';
import type { AgentJson } from './fleet';
import { waitFor } from './fleet';
import type { MountS3Choice } from './mounts';

const FUSE_CONNECTIONS = '/sys/fs/fuse/connections';

export interface BatchHostOptions {
  readonly workDir: string;
  readonly instanceId: string;
  /** The AZ ID of the queue the host serves (its Express cache bucket is that zone's). */
  readonly zoneId: string;
  /** The Batch stack's agent.json. */
  readonly agentConfig: AgentJson;
  /** Where the host's paths are: its Mountpoint paths are below it. */
  readonly hostRoot: string;
  readonly proxy: FaultProxy;
  readonly mountS3: MountS3Choice;
  /** The stand-in's buckets, when the mounts are the Node stand-in's. */
  readonly bucketsDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly onCleanup: (what: string, run: () => Promise<void> | void) => void;
}

interface AgentState {
  readonly mounts: {
    readonly path: string;
    readonly active: string;
    processes: { role: string; pid?: number }[];
  }[];
}

export class PlayedBatchHost {
  private log = '';

  private constructor(
    readonly instanceId: string,
    /** The task cgroup's directory (absolute): the containers of this host's jobs run below it. */
    readonly taskCgroup: string,
    readonly expressBucket: string | undefined,
    private readonly runDir: string,
    private readonly agent: ChildProcess,
  ) {
    agent.stderr!.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-200_000)));
  }

  /** Starts the agent; resolves once its ready file says every mount is live. */
  static async start(o: BatchHostOptions): Promise<PlayedBatchHost> {
    const root = cgroup2Root();
    if (!root) throw new Error('Batch host: no cgroup v2 file system is mounted here');
    const relativeTaskCgroup = `mountfleet-sandbox-${process.pid}/ecstasks.slice`;
    const taskCgroup = join(root, relativeTaskCgroup);
    mkdirSync(taskCgroup, { recursive: true });
    o.onCleanup('remove the Batch host task cgroup', () => {
      for (const dir of [taskCgroup, join(root, relativeTaskCgroup.split('/')[0])])
        if (existsSync(dir)) rmdirSync(dir);
    });
    mountFuseControl(o.onCleanup);
    const dir = join(o.workDir, `batch-host-${o.instanceId}`);
    const runDir = join(dir, 'run');
    mkdirSync(runDir, { recursive: true });
    const config = join(dir, 'agent.json');
    writeFileSync(
      config,
      JSON.stringify({
        ...o.agentConfig,
        mounts: o.agentConfig.mounts.map((m) => ({ ...m, path: join(o.hostRoot, m.path) })),
        containers: { ...(o.agentConfig.containers as object), taskCgroup: relativeTaskCgroup },
      }),
    );
    const imds = await ImdsStandIn.start({ instanceId: o.instanceId, availabilityZoneId: o.zoneId });
    o.onCleanup('stop the Batch host IMDS stand-in', () => imds.stop());
    const agent = spawn(
      process.execPath,
      [CLI_BUNDLE, 'up', '--supervise', '--no-install', '--config', config],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
        env: {
          ...o.env,
          AWS_ENDPOINT_URL: o.proxy.endpoint,
          AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint,
          ...(o.mountS3.kind === 'stand-in'
            ? { MOUNTFLEET_MOUNT_S3: STANDIN, MOUNT_S3_STANDIN_BUCKETS: o.bucketsDir }
            : {
                MOUNTFLEET_MOUNT_S3: emulatorMountS3(dir, o.mountS3.binary, o.proxy.endpoint),
                AWS_EC2_METADATA_DISABLED: 'true',
              }),
          MOUNTFLEET_RUN_DIR: runDir,
          MOUNTFLEET_METRICS_RELAY: 'http://127.0.0.1:0',
          MOUNTFLEET_SYSTEM_ROOT: join(dir, 'root'),
        },
      },
    );
    const host = new PlayedBatchHost(
      o.instanceId,
      taskCgroup,
      o.agentConfig.expressCache?.buckets[o.zoneId],
      runDir,
      agent,
    );
    o.onCleanup(`stop the Batch host ${o.instanceId}'s agent`, () => host.stop());
    await host.waitReady('the Batch host agent to mount the fleet paths');
    return host;
  }

  /** Whether the agent's ready file is there (the ECS start gate's, and the scheduler stand-in's, signal). */
  ready(): boolean {
    return existsSync(join(this.runDir, MOUNTS_READY_FILE));
  }

  async waitReady(what = 'the Batch host to be ready'): Promise<void> {
    await waitFor(
      what,
      () => {
        if (this.agent.exitCode !== null)
          throw new Error(`the Batch host agent exited:\n${this.log.slice(-3000)}`);
        return this.ready() ? true : undefined;
      },
      120_000,
    );
  }

  /** The agent's events of one kind so far (its JSON lines on stderr). */
  events(name: string): Record<string, unknown>[] {
    return this.log
      .split('\n')
      .filter((l) => l.includes(`"event":"${name}"`))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** `kill -9` of the Mountpoint process that serves new opens of the first mount now; its pid. */
  killMountpoint(): number {
    const state = JSON.parse(readFileSync(join(this.runDir, 'state.json'), 'utf8')) as AgentState;
    const mount = state.mounts[0];
    const pid = mount.processes.find((p) => p.role === mount.active)?.pid;
    if (!pid) throw new Error(`Batch host: no pid for ${mount.path}'s ${mount.active} process`);
    process.kill(pid, 'SIGKILL');
    return pid;
  }

  /** Stops the agent (its mounts go with it), waiting for it. */
  async stop(): Promise<void> {
    if (this.agent.exitCode !== null || this.agent.signalCode !== null) return;
    const exited = new Promise((r) => this.agent.once('exit', r));
    this.agent.kill('SIGTERM');
    const killer = setTimeout(() => process.kill(-this.agent.pid!, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  }
}

/** FUSE's control file system, as systemd mounts it on an instance; mounted for the run, if it is not. */
function mountFuseControl(onCleanup: BatchHostOptions['onCleanup']): void {
  if (readMountinfo().some((e) => e.fsType === 'fusectl' && e.mountPoint === FUSE_CONNECTIONS)) return;
  if (spawnSync('mount', ['-t', 'fusectl', 'fusectl', FUSE_CONNECTIONS]).status !== 0) return;
  onCleanup('unmount the FUSE control file system', () => void spawnSync('umount', [FUSE_CONNECTIONS]));
}
