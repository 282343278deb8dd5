/**
 * What a BatchComputeFleet instance runs at boot beyond ComputeFleet's user data: the ECS agent's start gate
 * (batch-ecs-gate.ts) with its drop-in and slice, the ECS agent's task cgroups set explicitly, nftables, and the
 * whole user data as a MIME multipart document, the only form Batch accepts (it appends its own part, which adds
 * ECS_CLUSTER to /etc/ecs/ecs.config).
 */
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { IConstruct } from 'constructs';
import { ECS_TASK_CGROUP } from '../../core/contract';
import { ECS_GATE_PATH, ECS_GATE_SECONDS, ecsGateScript } from './batch-ecs-gate';
import { writeFileCommand } from './user-data';

const ECS_DROP_IN_DIR = '/etc/systemd/system/ecs.service.d';
/** The ECS agent's drop-in: the gate as ExecStartPre=, and a start timeout above the gate's bound. */
export const ECS_DROP_IN_PATH = `${ECS_DROP_IN_DIR}/10-mountfleet.conf`;
/** Our unit for the task cgroup: a slice named like it (the ECS agent's per-task slices go under it). */
export const ECS_TASK_SLICE_PATH = `/etc/systemd/system/${ECS_TASK_CGROUP}`;
/** The ECS agent's settings file (ecs.service's EnvironmentFile=). */
const ECS_CONFIG_PATH = '/etc/ecs/ecs.config';
/**
 * Task CPU and memory limits, which put task containers under ECS_TASK_CGROUP: on by default, but the ECS agent
 * turns them off silently when their setup fails unless they were set explicitly (amazon-ecs-agent agent_unix.go),
 * and then containers would run in system.slice, beside the ECS agent's own container, where no rule can tell them
 * from it.
 */
const ECS_TASK_LIMITS_SETTING = 'ECS_ENABLE_TASK_CPU_MEM_LIMIT=true';

/** systemd's start timeout for ecs.service: the gate's bound, plus time for its other ExecStartPre= steps. */
const ECS_START_TIMEOUT_SECONDS = ECS_GATE_SECONDS + 300;

/** One argument of an Exec line, quoted for systemd (`%` specifiers and `$` variables escaped). */
function systemdArgument(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** The drop-in: the gate with the fleet's mount paths, and a TimeoutStartSec= above its bound. */
export function ecsDropIn(mountPaths: readonly string[]): string {
  return [
    '# mountfleet: every start of the ECS agent waits for the IMDS rules and the mounts (ecs-start-gate).',
    '[Service]',
    `ExecStartPre=${[ECS_GATE_PATH, ...mountPaths.map(systemdArgument)].join(' ')}`,
    `TimeoutStartSec=${ECS_START_TIMEOUT_SECONDS}`,
    '',
  ].join('\n');
}

/** The task cgroup's slice: started by the gate and left active, so its cgroup is never removed and re-made. */
export function ecsTaskSlice(): string {
  return [
    '[Unit]',
    "Description=mountfleet: parent of the ECS agent's task slices, kept so the IMDS rule's cgroup stays live",
    '',
    '[Slice]',
    '',
  ].join('\n');
}

/**
 * The first commands of the user data, before any that can fail under `set -e` (package installs): once they
 * ran, no start of the ECS agent skips the gate, whatever fails later (the gate then gives up). ecs.service is
 * ordered after cloud-final, so its boot start job runs the gate once the user data is done.
 */
export function ecsGateCommands(scope: IConstruct, mountPaths: readonly string[]): string[] {
  return [
    `install -d -m 0755 /opt/mountfleet /etc/ecs ${ECS_DROP_IN_DIR}`,
    ...writeFileCommand(scope, ECS_GATE_PATH, ecsGateScript(), '0755'),
    ...writeFileCommand(scope, ECS_TASK_SLICE_PATH, ecsTaskSlice(), '0644'),
    ...writeFileCommand(scope, ECS_DROP_IN_PATH, ecsDropIn(mountPaths), '0644'),
    `grep -qx '${ECS_TASK_LIMITS_SETTING}' ${ECS_CONFIG_PATH} 2>/dev/null || echo '${ECS_TASK_LIMITS_SETTING}' >> ${ECS_CONFIG_PATH}`,
    'systemctl daemon-reload',
  ];
}

/** nftables for the gate's `nft` (not always on the AMI), installed with the others (through `retry`). */
export function installNftablesCommands(): string[] {
  return ['command -v nft >/dev/null || retry dnf install -y nftables'];
}

/** The user data as a MIME multipart document with it as its one shell-script part. */
export function multipartUserData(userData: ec2.UserData): ec2.MultipartUserData {
  const multipart = new ec2.MultipartUserData();
  multipart.addUserDataPart(userData, ec2.MultipartBody.SHELL_SCRIPT, true);
  return multipart;
}
