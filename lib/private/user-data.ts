import type { IConstruct } from 'constructs';
import { DEFAULT_AGENT_CONFIG_PATH } from '../../core/contract';
import { invalidProp } from './validation';

/** Where the user data puts the agent bundle and its launcher on the instance. */
export const AGENT_BUNDLE_PATH = '/opt/mountfleet/mountfleet.js';
export const AGENT_LAUNCHER_PATH = '/usr/local/bin/mountfleet';
export const AGENT_UNIT_NAME = 'mountfleet-agent.service';

/**
 * The systemd unit that runs `mountfleet up` at boot and `mountfleet down` at shutdown. `Type=exec` with
 * `RemainAfterExit=yes` is right whether `up` returns once the mounts' own units run or stays to watch the
 * cache: either way `down` runs only when the unit is stopped, never right after `up` returns.
 */
export function agentUnit(): string {
  return [
    '[Unit]',
    'Description=mountfleet agent: Mountpoint mounts, Express cache watchdog, scratch',
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=exec',
    `Environment=MOUNTFLEET_CONFIG=${DEFAULT_AGENT_CONFIG_PATH}`,
    `ExecStart=${AGENT_LAUNCHER_PATH} up`,
    `ExecStop=${AGENT_LAUNCHER_PATH} down`,
    'RemainAfterExit=yes',
    'Restart=on-failure',
    'RestartSec=5',
    'TimeoutStopSec=300',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/**
 * A file of `scope`'s user data written by a quoted heredoc (no shell expansion inside). Of the props, only mount
 * paths reach such a file as text (the ECS drop-in); agent.json is a token until deploy, and one line.
 */
export function writeFileCommand(scope: IConstruct, path: string, content: string, mode: string): string[] {
  const marker = 'MOUNTFLEET_EOF';
  if (content.includes(marker)) {
    invalidProp(
      scope,
      'mounts',
      `${path} of the user data would contain ${marker}, which ends its heredoc`,
      `take "${marker}" out of the mount paths`,
    );
  }
  return [`cat > ${path} <<'${marker}'`, content.replace(/\n$/, ''), marker, `chmod ${mode} ${path}`];
}

/** The first CloudWatch agent release that accepts Mountpoint's OTLP exponential histograms. */
export const CLOUDWATCH_AGENT_MIN_VERSION = '1.300060.0';
/** The systemd path unit that starts the CloudWatch agent once `mountfleet up` has written its config. */
export const CLOUDWATCH_PATH_UNIT_NAME = 'mountfleet-cloudwatch-agent.path';
/** The one-shot unit the path unit starts: loads that config into the CloudWatch agent and starts it. */
export const CLOUDWATCH_LOAD_UNIT_NAME = 'mountfleet-cloudwatch-agent.service';
const CLOUDWATCH_AGENT_CTL = '/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl';

/**
 * `retry CMD…`: runs CMD up to five times with a growing pause, and fails (status 1, naming CMD) when the last
 * attempt fails. Package installs at boot collide with other installers (dnf's lock, a repository refresh),
 * so every install goes through it; under `set -e` a give-up stops the boot.
 */
export function retryFunctionCommands(): string[] {
  return [
    'retry() {',
    '  local attempt',
    '  for attempt in 1 2 3 4 5; do',
    '    "$@" && return 0',
    `    echo "mountfleet: attempt $attempt of '$*' failed" >&2`,
    '    [ "$attempt" -lt 5 ] && sleep $((attempt * 5))',
    '  done',
    `  echo "mountfleet: giving up on '$*' after 5 attempts" >&2`,
    '  return 1',
    '}',
  ];
}

/** Installs Node.js 22 (the agent's runtime) and makes the agent's directories. */
export function installNodeCommands(): string[] {
  return [
    'retry dnf install -y nodejs22',
    'NODE_BIN=$(command -v node-22 || command -v node)',
    'install -d -m 0755 /opt/mountfleet /etc/mountfleet',
  ];
}

/**
 * Installs amazon-efs-utils, the `mount -t efs` helper that `mountfleet scratch` mounts with (TLS; on Amazon
 * Linux 2023 the package requires stunnel, which dnf installs with it).
 */
export function installEfsUtilsCommands(): string[] {
  return ['retry dnf install -y amazon-efs-utils'];
}

/**
 * Refuses a bundle whose sha256 is not the one computed at synth: the boot stops here (`set -e`), with a log
 * line, the file removed, and nothing of it run.
 */
export function verifyBundleCommands(scope: IConstruct, path: string, sha256: string): string[] {
  if (!/^[0-9a-f]{64}$/.test(sha256)) {
    invalidProp(
      scope,
      'agent',
      `"${sha256}" is not a sha256 digest of ${path}`,
      'rebuild the bundle: node scripts/bundle.mjs',
    );
  }
  return [
    `if ! echo '${sha256}  ${path}' | sha256sum --check --status; then`,
    `  echo "mountfleet: ${path} does not have the sha256 baked into the launch template (${sha256}); refusing to run it" >&2`,
    `  rm -f ${path}`,
    '  exit 1',
    'fi',
  ];
}

/**
 * Installs the CloudWatch agent and arranges for it to start with the config `mountfleet up` writes
 * (`configPath`, outside the agent's `amazon-cloudwatch-agent.d`, because `fetch-config` empties that directory
 * of every file it did not write). A path unit waits for the file, so there is no race with `up`; its one-shot
 * service runs the documented `amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -c file:… -s`. A release
 * older than {@link CLOUDWATCH_AGENT_MIN_VERSION} drops Mountpoint's histograms, so it is not started (and the
 * boot goes on: mounts do not need metrics).
 */
export function installCloudWatchAgentCommands(scope: IConstruct, configPath: string): string[] {
  return [
    'retry dnf install -y amazon-cloudwatch-agent',
    "CWA_VERSION=$(rpm -q --queryformat '%{VERSION}' amazon-cloudwatch-agent)",
    'CWA_VERSION=${CWA_VERSION%%[!0-9.]*}',
    `if [ "$(printf '%s\\n' '${CLOUDWATCH_AGENT_MIN_VERSION}' "$CWA_VERSION" | sort -V | head -n 1)" = '${CLOUDWATCH_AGENT_MIN_VERSION}' ]; then`,
    ...writeFileCommand(
      scope,
      `/etc/systemd/system/${CLOUDWATCH_LOAD_UNIT_NAME}`,
      cloudWatchLoadUnit(configPath),
      '0644',
    ),
    ...writeFileCommand(
      scope,
      `/etc/systemd/system/${CLOUDWATCH_PATH_UNIT_NAME}`,
      cloudWatchPathUnit(configPath),
      '0644',
    ),
    '  systemctl daemon-reload',
    `  systemctl enable --now ${CLOUDWATCH_PATH_UNIT_NAME}`,
    'else',
    `  echo "mountfleet: amazon-cloudwatch-agent $CWA_VERSION is older than ${CLOUDWATCH_AGENT_MIN_VERSION}, which Mountpoint's metrics need; not starting it" >&2`,
    'fi',
  ];
}

/** Starts {@link CLOUDWATCH_LOAD_UNIT_NAME} as soon as the config exists. */
export function cloudWatchPathUnit(configPath: string): string {
  return [
    '[Unit]',
    'Description=mountfleet: start the CloudWatch agent once mountfleet has written its config',
    `Before=${AGENT_UNIT_NAME}`,
    '',
    '[Path]',
    `PathExists=${configPath}`,
    `Unit=${CLOUDWATCH_LOAD_UNIT_NAME}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/**
 * Loads the config into the CloudWatch agent and starts it. `RemainAfterExit=yes` keeps the unit active after the
 * command returns, so the path unit (whose condition stays true) does not start it again and again.
 */
export function cloudWatchLoadUnit(configPath: string): string {
  return [
    '[Unit]',
    'Description=mountfleet: load the CloudWatch agent config mountfleet wrote and start the agent',
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `ExecStart=${CLOUDWATCH_AGENT_CTL} -a fetch-config -m ec2 -c file:${configPath} -s`,
    '',
  ].join('\n');
}

/** The launcher, after the bundle is in place: `mountfleet …` works for operators on the instance too. */
export function launcherCommands(): string[] {
  return [
    `printf '#!/bin/sh\\nexec %s ${AGENT_BUNDLE_PATH} "$@"\\n' "$NODE_BIN" > ${AGENT_LAUNCHER_PATH}`,
    `chmod 0755 ${AGENT_LAUNCHER_PATH}`,
  ];
}
