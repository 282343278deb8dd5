/**
 * systemd units for Mountpoint processes (one `Type=forking` unit each) and the agent's own service,
 * plus the local CloudWatch agent configuration that receives Mountpoint's OTLP metrics.
 */
import {
  agentMetricsLogGroupName,
  CLOUDWATCH_AGENT_FLUSH_SECONDS,
  MOUNTPOINT_FLEET_DIMENSION,
  MOUNTPOINT_METRICS_NAMESPACE,
  OTLP_ENDPOINT,
} from '../contract';
import { type ProcessPlan } from '../tuner';

const FUSERMOUNT = '/usr/bin/fusermount';
/** Mountpoint's oom_score_adj (-1000 never, 0 default), in units and under --supervise alike. */
export const MOUNTPOINT_OOM_SCORE_ADJ = -900;
const INSTALL = '/usr/bin/install';

/** Escapes one argument for ExecStart=: `%` starts a specifier, `$` a variable, spaces split words. */
export function systemdArg(arg: string): string {
  const escaped = arg.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_@+=:,./-]+$/.test(arg) && !arg.includes('%')
    ? escaped
    : `"${escaped.replace(/(["\\])/g, '\\$1')}"`;
}

export function unitName(mountName: string, role: ProcessPlan['role']): string {
  return `mountfleet-${mountName}-${role}.service`;
}

export function renderMountUnit(options: {
  readonly mountName: string;
  readonly process: ProcessPlan;
  readonly mountS3: string;
  readonly description: string;
}): string {
  const { process: p, mountS3 } = options;
  const env = Object.entries(p.environment)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `Environment=${systemdArg(`${k}=${v}`)}`);
  return [
    '[Unit]',
    `Description=${options.description}`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=forking',
    ...env,
    `ExecStartPre=/bin/mkdir -p ${systemdArg(p.mountPoint)}`,
    // Restarting after a crash finds a dead FUSE mount ("Transport endpoint is not connected"):
    // detach it first (the leading '-' ignores "not mounted"), or the new process cannot mount there.
    `ExecStartPre=-${FUSERMOUNT} -uz ${systemdArg(p.mountPoint)}`,
    // Mountpoint refuses a --cache directory that does not exist; install -d also fixes its mode.
    ...(p.options.cacheDirectory
      ? [`ExecStartPre=${INSTALL} -d -m 0700 ${systemdArg(p.options.cacheDirectory)}`]
      : []),
    `ExecStart=${[mountS3, ...p.args].map(systemdArg).join(' ')}`,
    `ExecStop=${FUSERMOUNT} -u ${systemdArg(p.mountPoint)}`,
    'Restart=on-failure',
    'RestartSec=2',
    // The OOM killer picks the largest process, often Mountpoint beside a job's; killing it ends every job on the
    // mount. Its memory is bounded by --memory-target already: let the job that overran its own be the one to go.
    `OOMScoreAdjust=${MOUNTPOINT_OOM_SCORE_ADJ}`,
    // Mountpoint's own readiness wait is 30 s; leave room for it before systemd gives up.
    'TimeoutStartSec=45',
    '',
    '[Install]',
    'WantedBy=remote-fs.target',
    '',
  ].join('\n');
}

/**
 * The CloudWatch agent's config: receive Mountpoint's OTLP metrics and publish them to the mountfleet
 * namespace with the fleet's Auto Scaling group as the one added dimension, and ship mountfleet's own
 * EMF lines (Express cache switches) to the fleet's log group, which the stack creates. Only keys of the
 * agent's schema (v1.300060.0): it refuses to start on an unknown one. No `retention_in_days`: the
 * stack owns retention, and the role may not change it.
 */
export function renderCloudWatchAgentConfig(options: {
  readonly fleetId: string;
  readonly region: string;
  readonly metricsLogFile: string;
}): string {
  return `${JSON.stringify(
    {
      // Needed outside EC2 (the agent's onPrem mode); on EC2 it matches what IMDS says.
      agent: { region: options.region },
      metrics: {
        namespace: MOUNTPOINT_METRICS_NAMESPACE,
        force_flush_interval: CLOUDWATCH_AGENT_FLUSH_SECONDS,
        // The agent's only way to add a dimension to OTLP metrics (Mountpoint's resource has no attributes).
        // Its ec2tagger reads IMDS and the instance's aws:autoscaling:groupName tag: EC2 mode only.
        append_dimensions: { [MOUNTPOINT_FLEET_DIMENSION]: '${aws:AutoScalingGroupName}' },
        metrics_collected: { otlp: { http_endpoint: new URL(OTLP_ENDPOINT).host } },
      },
      logs: {
        logs_collected: {
          files: {
            collect_list: [
              {
                file_path: options.metricsLogFile,
                log_group_name: agentMetricsLogGroupName(options.fleetId),
                log_stream_name: '{instance_id}',
              },
            ],
          },
        },
      },
    },
    null,
    2,
  )}\n`;
}
