import { DEFAULT_AGENT_CONFIG_PATH } from '../../core/config';

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

/** A file written by a quoted heredoc (no shell expansion inside). */
export function writeFileCommand(path: string, content: string, mode: string): string[] {
  const marker = 'MOUNTFLEET_EOF';
  if (content.includes(marker)) throw new Error(`${path}: content must not contain ${marker}`);
  return [`cat > ${path} <<'${marker}'`, content.replace(/\n$/, ''), marker, `chmod ${mode} ${path}`];
}

/** Installs Node.js 22 (retried: package installs at boot collide with other installers) and the launcher. */
export function installNodeCommands(): string[] {
  return [
    'for attempt in 1 2 3 4 5; do dnf install -y nodejs22 && break; sleep $((attempt * 5)); done',
    'NODE_BIN=$(command -v node-22 || command -v node)',
    'install -d -m 0755 /opt/mountfleet /etc/mountfleet',
  ];
}

/** The launcher, after the bundle is in place: `mountfleet …` works for operators on the instance too. */
export function launcherCommands(): string[] {
  return [
    `printf '#!/bin/sh\\nexec %s ${AGENT_BUNDLE_PATH} "$@"\\n' "$NODE_BIN" > ${AGENT_LAUNCHER_PATH}`,
    `chmod 0755 ${AGENT_LAUNCHER_PATH}`,
  ];
}
