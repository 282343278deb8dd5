/**
 * The contract between a Batch fleet's instance (the launch template's user data and ECS drop-in, lib/) and the
 * mountfleet agent on it (core/agent): where the agent says the mounts are live, where the ECS agent puts the
 * job containers, and the unit that starts them.
 */

/**
 * In the agent's run directory (DEFAULT_RUN_DIR): written, holding the agent's pid, once every mount is live,
 * and removed while one is down or switching. The ECS agent's start gate waits for it.
 */
export const MOUNTS_READY_FILE = 'mounts-ready';

/**
 * The cgroup under which the ECS agent (task CPU/memory limits on, the default, set explicitly by the user data)
 * starts every task's containers on cgroup v2: `ecstasks.slice/ecstasks-<task id>.slice/docker-<id>.scope`
 * (amazon-ecs-agent agent/api/task/task_linux.go, config_unix.go DefaultTaskCgroupV2Prefix "ecstasks").
 */
export const ECS_TASK_CGROUP = 'ecstasks.slice';

/** The ECS agent's unit on the ECS-optimized Amazon Linux 2023 AMI. */
export const ECS_UNIT = 'ecs.service';
