/**
 * Where the agent reads and writes on an instance, with the environment seams that move it for tests:
 * MOUNTFLEET_MOUNT_S3 (the Mountpoint binary), MOUNTFLEET_RUN_DIR (state and per-mount directories) and
 * MOUNTFLEET_SYSTEM_ROOT (prefix for unit files, the CloudWatch agent config, logs and the root-volume
 * cache, so a test never writes into the real /etc or /var) and MOUNTFLEET_METRICS_RELAY (where the
 * agent's metrics relay listens; tests use port 0, so agents running side by side each get one).
 */
import { join } from 'node:path';
import { METRICS_RELAY_ENDPOINT } from './metric-names';

/** Where the agent keeps state, per-mount directories, scratch locks and run records (MOUNTFLEET_RUN_DIR moves it). */
export const DEFAULT_RUN_DIR = '/run/mountfleet';

/** Where `up` writes the CloudWatch agent's config (relative to MOUNTFLEET_SYSTEM_ROOT). */
const CLOUDWATCH_AGENT_CONFIG_PATH = 'etc/mountfleet/cloudwatch-agent.json';

interface AgentPaths {
  readonly mountS3: string;
  readonly runDir: string;
  readonly systemRoot: string;
  readonly unitDir: string;
  readonly cloudWatchAgentConfigFile: string;
  readonly metricsLogFile: string;
  readonly metricsRelay: string;
}

export function agentPaths(env: NodeJS.ProcessEnv = process.env): AgentPaths {
  const systemRoot = env.MOUNTFLEET_SYSTEM_ROOT ?? '/';
  return {
    mountS3: env.MOUNTFLEET_MOUNT_S3 ?? '/usr/bin/mount-s3',
    runDir: env.MOUNTFLEET_RUN_DIR ?? DEFAULT_RUN_DIR,
    systemRoot,
    unitDir: join(systemRoot, 'etc/systemd/system'),
    // Outside the agent's amazon-cloudwatch-agent.d: `amazon-cloudwatch-agent-ctl -a fetch-config`
    // copies the file it is given there and then deletes every other file in it, this one included.
    cloudWatchAgentConfigFile: join(systemRoot, CLOUDWATCH_AGENT_CONFIG_PATH),
    metricsLogFile: join(systemRoot, 'var/log/mountfleet/metrics.log'),
    metricsRelay: env.MOUNTFLEET_METRICS_RELAY ?? METRICS_RELAY_ENDPOINT,
  };
}
