/**
 * What a BatchComputeFleet instance runs at boot beyond ComputeFleet's user data: the ECS agent (started by the
 * ECS-optimized AMI) takes jobs only once the mountfleet agent's mounts are up, and the whole user data is a
 * MIME multipart document, the only form Batch accepts (it appends its own part, the ECS cluster settings).
 */
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { AGENT_UNIT_NAME, writeFileCommand } from './user-data';

/** The one-shot unit that is active once every mount path of the fleet is a mount point. */
export const MOUNTS_READY_UNIT_NAME = 'mountfleet-mounts-ready.service';
/** The drop-in that orders the ECS agent after it. */
export const ECS_DROP_IN_PATH = '/etc/systemd/system/ecs.service.d/10-mountfleet.conf';
const WAIT_SCRIPT_PATH = '/opt/mountfleet/wait-for-mounts';

/** How long the ready unit waits for the mounts before it fails (and the ECS agent with it). */
const MOUNTS_READY_TIMEOUT_SECONDS = 900;

/**
 * Waits until every path given is a mount point: it wakes on each change of the mount table (`findmnt --poll`)
 * and checks again at least every 5 s, which bounds the window between a check and the start of the poll. POSIX
 * sh (dash too); where `findmnt --poll` cannot run it sleeps a second instead of spinning.
 */
export function waitScript(): string {
  return [
    '#!/bin/sh',
    'for path in "$@"; do',
    '  until mountpoint -q "$path"; do',
    '    findmnt --poll=mount --first-only --timeout 5000 >/dev/null 2>&1 || sleep 1',
    '  done',
    'done',
    '',
  ].join('\n');
}

/** The ready unit: after the agent (its install and `up`), done when the mounts are there. */
export function mountsReadyUnit(mountPaths: readonly string[]): string {
  return [
    '[Unit]',
    "Description=mountfleet: the fleet's Mountpoint mounts are up (the ECS agent takes jobs only after this)",
    `Requires=${AGENT_UNIT_NAME}`,
    `After=${AGENT_UNIT_NAME}`,
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `TimeoutStartSec=${MOUNTS_READY_TIMEOUT_SECONDS}`,
    `ExecStart=${[WAIT_SCRIPT_PATH, ...mountPaths].join(' ')}`,
    '',
  ].join('\n');
}

/** The ECS agent's drop-in: it needs the ready unit and starts after it; if the mounts fail, no job lands here. */
export function ecsDropIn(): string {
  return ['[Unit]', `Requires=${MOUNTS_READY_UNIT_NAME}`, `After=${MOUNTS_READY_UNIT_NAME}`, ''].join('\n');
}

/**
 * Adds the ordering to the fleet's user data: the wait script, the ready unit and the ECS drop-in, then a
 * restart of the ECS agent only if it already runs (`try-restart`; `--no-block` so the boot does not wait),
 * which puts it behind the mounts whichever started first.
 */
export function addEcsOrdering(userData: ec2.UserData, mountPaths: readonly string[]): void {
  userData.addCommands(
    ...writeFileCommand(WAIT_SCRIPT_PATH, waitScript(), '0755'),
    ...writeFileCommand(`/etc/systemd/system/${MOUNTS_READY_UNIT_NAME}`, mountsReadyUnit(mountPaths), '0644'),
    'install -d -m 0755 /etc/systemd/system/ecs.service.d',
    ...writeFileCommand(ECS_DROP_IN_PATH, ecsDropIn(), '0644'),
    'systemctl daemon-reload',
    'systemctl try-restart --no-block ecs.service',
  );
}

/** The user data as a MIME multipart document with it as its one shell-script part. */
export function multipartUserData(userData: ec2.UserData): ec2.MultipartUserData {
  const multipart = new ec2.MultipartUserData();
  multipart.addUserDataPart(userData, ec2.MultipartBody.SHELL_SCRIPT, true);
  return multipart;
}
