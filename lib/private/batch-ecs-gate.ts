/**
 * The ECS agent's start gate on a Batch host: a POSIX sh script (dash too; /bin/sh is bash on Amazon Linux 2023)
 * that ecs.service runs as an ExecStartPre= of a drop-in, so that every start of the ECS agent passes it — the one
 * queued at boot included, which a Requires=/After= added by a drop-in would not reach (systemd#23034), whereas
 * ExecStartPre= is read when the start job runs.
 */
import { DEFAULT_RUN_DIR, ECS_TASK_CGROUP, MOUNTS_READY_FILE } from '../../core/contract';
import { imdsRules } from './batch-imds-rules';

/** Where the user data puts the gate. */
export const ECS_GATE_PATH = '/opt/mountfleet/ecs-start-gate';

/** How long the gate waits for the mounts before it gives up (the drop-in's TimeoutStartSec= is above it). */
export const ECS_GATE_SECONDS = 900;

/** What the gate does when it gives up: the launch template's shutdown behaviour TERMINATE ends the instance. */
export const ECS_GATE_GIVE_UP = 'systemctl poweroff --no-block';

/**
 * The gate. In order:
 *
 * 1. starts ECS_TASK_CGROUP as a slice unit of its own (the ECS agent creates only the per-task slices under it),
 *    so that its cgroup exists when the IMDS rules resolve its name, and stays the same cgroup afterwards;
 * 2. loads the IMDS rules (batch-imds-rules.ts), replacing the table if it is there;
 * 3. waits until the mountfleet agent's ready file names a running process and every mount path given as an
 *    argument is a mount point: it wakes on each change of the mount table (`findmnt --poll`) and checks at least
 *    once a second for the file (sh has no way to wait for a file to appear);
 * 4. gives up when a step fails or the bound passes: says why, runs the give-up command, exits 1, and the ECS
 *    agent does not start.
 *
 * The environment can replace the ready file, the bound in seconds and the give-up command (the tests do):
 * MOUNTFLEET_GATE_READY_FILE, MOUNTFLEET_GATE_SECONDS, MOUNTFLEET_GATE_GIVE_UP.
 */
export function ecsGateScript(): string {
  return [
    '#!/bin/sh',
    '# mountfleet: ExecStartPre= of ecs.service. The ECS agent starts only once job containers cannot reach IMDS',
    "# and the fleet's mounts are live. Usage: ecs-start-gate MOUNT_PATH...",
    `ready_file=\${MOUNTFLEET_GATE_READY_FILE:-${DEFAULT_RUN_DIR}/${MOUNTS_READY_FILE}}`,
    `bound=\${MOUNTFLEET_GATE_SECONDS:-${ECS_GATE_SECONDS}}`,
    `give_up_command=\${MOUNTFLEET_GATE_GIVE_UP:-${ECS_GATE_GIVE_UP}}`,
    '',
    'log() { echo "mountfleet ecs-start-gate: $*" >&2; }',
    '',
    'give_up() {',
    '  log "$1; giving up ($give_up_command): the instance terminates, and Batch replaces it"',
    '  $give_up_command',
    '  exit 1',
    '}',
    '',
    '# Seconds since boot: a clock step at boot (chrony) does not move the deadline.',
    'uptime_seconds() {',
    '  read -r up rest < /proc/uptime',
    '  echo "${up%.*}"',
    '}',
    '',
    '# Prints what is not ready yet; prints nothing when everything is.',
    'not_ready() {',
    '  if [ ! -f "$ready_file" ]; then',
    '    echo "no $ready_file (the mountfleet agent writes it once every mount is live)"',
    '    return',
    '  fi',
    '  pid=',
    '  { read -r pid < "$ready_file"; } 2>/dev/null',
    '  case $pid in',
    `    '' | *[!0-9]*) echo "$ready_file names no pid"; return ;;`,
    '  esac',
    '  if ! kill -0 "$pid" 2>/dev/null; then',
    '    echo "$ready_file names pid $pid, which is not running"',
    '    return',
    '  fi',
    '  for path in "$@"; do',
    '    mountpoint -q "$path" || { echo "$path is not a mount point"; return; }',
    '  done',
    '}',
    '',
    `systemctl start ${ECS_TASK_CGROUP} || give_up "could not start ${ECS_TASK_CGROUP}, the cgroup job containers run in"`,
    'nft -f - <<\'MOUNTFLEET_NFT\' || give_up "could not load the rules that keep job containers from IMDS"',
    imdsRules().replace(/\n$/, ''),
    'MOUNTFLEET_NFT',
    '',
    'deadline=$(($(uptime_seconds) + bound))',
    // The test is the last command of the condition: a failing not_ready can never read as ready.
    'while reason=$(not_ready "$@"); [ -n "$reason" ]; do',
    '  [ "$(uptime_seconds)" -lt "$deadline" ] || give_up "not ready after $bound s: $reason"',
    // In a subshell of its own: bash reports a child killed by a signal (findmnt has been seen to abort while the
    // mount table churns) on its own stderr, which is the subshell's here, not the unit's log.
    '  (findmnt --poll=mount --first-only --timeout 1000; exit $?) >/dev/null 2>&1 || sleep 1',
    'done',
    'log "IMDS rules loaded and every mount live: the ECS agent starts"',
    '',
  ].join('\n');
}
