/**
 * `mountfleet up`: install the pinned Mountpoint, tune it for this instance, mount every configured
 * bucket (systemd units, or `--supervise` to run them itself) and watch the Express cache zone until
 * SIGTERM/SIGINT, which unmounts everything. With a termination lifecycle hook in agent.json it also
 * watches for Auto Scaling terminating the instance: it then waits for scratch runs, unmounts and
 * completes the hook. The work lives in core/mountpoint.
 */
import { existsSync } from 'node:fs';
import { EXIT_STATUS, UsageError } from '../../core/common';
import type { RegisterCommand } from '../command';
import { autoScalingClient, ec2Client, s3ExpressClient } from '../../core/aws';
import { systemClock } from '../../core/common';
import { untrustedConfiguredPathProblem } from '../../core/system';
import { loadAgentConfig, agentPaths } from '../../core/contract';
import {
  metadataService,
  readInstanceIdentity,
  gatherHostFacts,
  lookupInstanceType,
} from '../../core/instance';
import {
  MountAgent,
  type AgentOptions,
  installMountpoint,
  handleAutoScalingTermination,
  AgentRunDirBusy,
  holdAgentRunDir,
} from '../../core/agent';

interface UpOptions {
  config?: string;
  supervise?: boolean;
  install: boolean;
}

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('up')
    .description('install, tune and mount Mountpoint for this instance, then watch the Express cache zone')
    .option('--config <file>', 'agent config (default: MOUNTFLEET_CONFIG or /etc/mountfleet/agent.json)')
    .option('--supervise', 'run and supervise the mounts in this process instead of systemd units')
    .option('--no-install', 'use the Mountpoint at MOUNTFLEET_MOUNT_S3 instead of installing the pinned one')
    .action(async (opts: UpOptions) => {
      const log = (e: Record<string, unknown>) =>
        process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...e })}\n`);
      const config = loadAgentConfig(opts.config);
      // Mountpoint mounts (and systemd restarts) these paths long after now: nobody but root may re-point them.
      config.mounts.forEach((m, i) => {
        const problem = untrustedConfiguredPathProblem(m.path);
        if (problem) throw new UsageError(`agent.json mounts[${i}].path ${m.path}: ${problem}`);
      });
      const paths = agentPaths();
      if (!opts.supervise && !existsSync('/run/systemd/system')) {
        throw new UsageError('systemd is not running here; use --supervise');
      }
      try {
        await holdAgentRunDir(paths.runDir, opts.config ?? process.env.MOUNTFLEET_CONFIG);
      } catch (err) {
        if (!(err instanceof AgentRunDirBusy)) throw err;
        process.stderr.write(`mountfleet up: refusing: ${err.message}\n`);
        ctx.exitCode = EXIT_STATUS.inUse;
        return;
      }
      if (opts.install) {
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
      const imds = metadataService();
      const identity = await readInstanceIdentity(imds);
      const instance = await lookupInstanceType(
        identity.instanceType,
        ec2Client({ maxAttempts: 2 }),
        (reason) => log({ event: 'instance-type-fallback', instanceType: identity.instanceType, reason }),
      );
      const options: AgentOptions = {
        config,
        identity,
        instance,
        host: gatherHostFacts(paths.systemRoot),
        mountS3: paths.mountS3,
        mode: opts.supervise ? 'supervise' : 'systemd',
        runDir: paths.runDir,
        unitDir: paths.unitDir,
        cloudWatchAgentConfigFile: paths.cloudWatchAgentConfigFile,
        metricsLogFile: paths.metricsLogFile,
        metricsRelay: paths.metricsRelay,
        expressClient: () => s3ExpressClient({ maxAttempts: 1, connectionTimeoutMs: 1000 }),
        log,
      };
      const agent = await MountAgent.create(options);
      const stop = new AbortController();
      const onSignal = (signal: string) => {
        log({ event: 'signal', signal });
        stop.abort();
      };
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      process.once('SIGINT', () => onSignal('SIGINT'));
      try {
        await agent.start();
      } catch (e) {
        log({ event: 'start-failed', error: (e as Error).message });
        await agent.stop();
        ctx.exitCode = 1;
        return;
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
    });
};
