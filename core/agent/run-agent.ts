/**
 * `mountfleet up` from start to stop: read agent.json, refuse what cannot work (a mount path another user
 * could re-point, no systemd without --supervise, a run dir another `up` holds), install the pinned
 * Mountpoint, learn the instance from IMDS, then run the mounts (MountAgent) until SIGTERM/SIGINT — or, with
 * a termination lifecycle hook in agent.json, until Auto Scaling terminates the instance: then it waits for
 * scratch runs, unmounts and completes the hook (termination-hook.ts).
 */
import { existsSync } from 'node:fs';
import { autoScalingClient, ec2Client, s3ExpressClient } from '../aws';
import { UsageError, systemClock } from '../common';
import { agentPaths, loadAgentConfig, type AgentConfig } from '../contract';
import {
  gatherHostFacts,
  lookupInstanceType,
  metadataService,
  readInstanceIdentity,
  type InstanceIdentity,
} from '../instance';
import { untrustedConfiguredPathProblem } from '../system';
import { holdAgentRunDir } from './agent-lock';
import { jsonLines } from './event-log';
import { installMountpoint } from './install-mountpoint';
import { MountAgent, type AgentOptions } from './mount-agent';
import { handleAutoScalingTermination } from './termination-hook';

/** What `mountfleet up` was asked to do. */
interface AgentRunRequest {
  /** `--config`; else MOUNTFLEET_CONFIG, else /etc/mountfleet/agent.json. */
  readonly configFile?: string;
  /** `--supervise`: run and supervise the mounts in this process instead of systemd units. */
  readonly supervise: boolean;
  /** Install the pinned Mountpoint first (`--no-install`: use the one at MOUNTFLEET_MOUNT_S3). */
  readonly install: boolean;
}

interface AgentRunHooks {
  /**
   * Hooks SIGTERM and SIGINT, called once the mounts are about to start (a signal before that ends the
   * process as usual); `onSignal` stops the agent. The handlers are disposed of when the run ends.
   */
  readonly stopOn: (onSignal: (name: string) => void) => { dispose(): void };
}

/** `start-failed`: a mount did not come up (logged), and what had started was stopped again. */
type AgentRunOutcome = 'stopped' | 'start-failed';

type AgentPaths = ReturnType<typeof agentPaths>;

const log = jsonLines;

/** Runs the agent until it is told to stop (or the instance terminates); refusals throw (exit 2 or 75). */
export async function runAgent(request: AgentRunRequest, hooks: AgentRunHooks): Promise<AgentRunOutcome> {
  const config = loadAgentConfig(request.configFile);
  // Mountpoint mounts (and systemd restarts) these paths long after now: nobody but root may re-point them.
  config.mounts.forEach((m, i) => {
    const problem = untrustedConfiguredPathProblem(m.path);
    if (problem) throw new UsageError(`agent.json mounts[${i}].path ${m.path}: ${problem}`);
  });
  const paths = agentPaths();
  if (!request.supervise && !existsSync('/run/systemd/system')) {
    throw new UsageError('systemd is not running here; use --supervise');
  }
  await holdAgentRunDir(paths.runDir, request.configFile ?? process.env.MOUNTFLEET_CONFIG);
  if (request.install) await install(config, paths);
  const imds = metadataService();
  const identity = await readInstanceIdentity(imds);
  const agent = await MountAgent.create(await agentOptions(request, config, paths, identity));
  const stop = new AbortController();
  const signals = hooks.stopOn((signal) => {
    log({ event: 'signal', signal });
    stop.abort();
  });
  try {
    try {
      await agent.start();
    } catch (e) {
      log({ event: 'start-failed', error: (e as Error).message });
      await agent.stop();
      return 'start-failed';
    }
    log({ event: 'up', mounts: config.mounts.map((m) => m.path), runDir: paths.runDir });
    const running = agent.runUntil(stop.signal);
    const hook = config.lifecycleHook;
    const termination = hook
      ? handleAutoScalingTermination({
          imds,
          autoScaling: autoScalingClient({ region: identity.region }),
          hookName: hook.name,
          instanceId: identity.instanceId,
          runDir: paths.runDir,
          stopMounts: () => {
            stop.abort();
            return running;
          },
          signal: stop.signal,
          clock: systemClock,
          log,
        })
      : undefined;
    await running;
    await termination;
    return 'stopped';
  } finally {
    signals.dispose();
  }
}

/** The pinned Mountpoint, from MOUNTFLEET_MOUNTPOINT_RELEASE_URL and _KEYS_URL when set. */
async function install(config: AgentConfig, paths: AgentPaths): Promise<void> {
  const result = await installMountpoint({
    version: config.mountpoint.version,
    keyFingerprint: config.mountpoint.keyFingerprint,
    mountS3: paths.mountS3,
    ...(process.env.MOUNTFLEET_MOUNTPOINT_RELEASE_URL
      ? { releaseUrl: process.env.MOUNTFLEET_MOUNTPOINT_RELEASE_URL }
      : {}),
    ...(process.env.MOUNTFLEET_MOUNTPOINT_KEYS_URL
      ? { keysUrl: process.env.MOUNTFLEET_MOUNTPOINT_KEYS_URL }
      : {}),
    log: (message) => log({ event: 'install', message }),
  });
  log({ event: 'install', ...result });
}

/** The agent for this instance: its type's facts (from EC2, else the built-in table), host facts, paths. */
async function agentOptions(
  request: AgentRunRequest,
  config: AgentConfig,
  paths: AgentPaths,
  identity: InstanceIdentity,
): Promise<AgentOptions> {
  const instance = await lookupInstanceType(identity.instanceType, ec2Client({ maxAttempts: 2 }), (reason) =>
    log({ event: 'instance-type-fallback', instanceType: identity.instanceType, reason }),
  );
  return {
    config,
    identity,
    instance,
    host: gatherHostFacts(paths.systemRoot),
    mountS3: paths.mountS3,
    mode: request.supervise ? 'supervise' : 'systemd',
    runDir: paths.runDir,
    unitDir: paths.unitDir,
    cloudWatchAgentConfigFile: paths.cloudWatchAgentConfigFile,
    metricsLogFile: paths.metricsLogFile,
    metricsRelay: paths.metricsRelay,
    expressClient: () => s3ExpressClient({ maxAttempts: 1, connectionTimeoutMs: 1000 }),
    log,
  };
}
