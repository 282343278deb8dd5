/**
 * The nftables rules that keep a Batch host's job containers away from the instance metadata service (IMDS), and
 * with it from the instance role's credentials.
 *
 * AWS Batch runs ECS-EC2 jobs with host networking
 * (https://docs.aws.amazon.com/batch/latest/userguide/networking-modes-jobs.html): a job shares the host's network
 * stack, so the IMDSv2 hop limit does not stop it, and rules on an interface cannot tell it from the host (AWS
 * re:Post, "ecs-container-ec2-metadata"). What tells them apart is the socket's cgroup: the ECS agent starts every
 * task's containers under ECS_TASK_CGROUP (`ecstasks.slice/ecstasks-<task>.slice/docker-<id>.scope`), while the
 * ECS agent's own container, which needs IMDS, is under `system.slice`. Jobs get their credentials from the job
 * role's endpoint (169.254.170.2), which these rules leave alone.
 */
import { ECS_TASK_CGROUP } from '../../core/contract';

/** The nftables table: one table of mountfleet's own, replaced as a whole each time it is loaded. */
export const IMDS_TABLE = 'inet mountfleet_imds';

/** IMDS's IPv4 address and its IPv6 address (Nitro instances with the IPv6 endpoint turned on). */
const IMDS_IPV4 = '169.254.169.254';
const IMDS_IPV6 = 'fd00:ec2::254';

/**
 * The rules, for `nft -f`: loading them again replaces the table (declared, deleted and defined in one atomic
 * transaction), so a restart of the ECS agent never duplicates a rule.
 *
 * - `output`: a socket whose level-1 cgroup is the task cgroup (nft resolves the name to a cgroup id when the
 *   rules load: the cgroup must exist then, and stay the same one) gets a TCP reset for IMDS, anything else to it
 *   is dropped.
 * - `forward`: packets to IMDS that come in from a Docker bridge (a bridge-mode container) are dropped; the hop
 *   limit of 1 stops them too, this does not depend on it.
 *
 * Counters show hits (`nft list table inet mountfleet_imds`).
 */
export function imdsRules(): string {
  const task = `socket cgroupv2 level 1 "${ECS_TASK_CGROUP}"`;
  return [
    `table ${IMDS_TABLE}`,
    `delete table ${IMDS_TABLE}`,
    `table ${IMDS_TABLE} {`,
    '  chain output {',
    '    type filter hook output priority filter; policy accept;',
    `    ip daddr ${IMDS_IPV4} ${task} meta l4proto tcp counter reject with tcp reset`,
    `    ip daddr ${IMDS_IPV4} ${task} counter drop`,
    `    ip6 daddr ${IMDS_IPV6} ${task} meta l4proto tcp counter reject with tcp reset`,
    `    ip6 daddr ${IMDS_IPV6} ${task} counter drop`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    iifname "docker*" ip daddr ${IMDS_IPV4} counter drop`,
    `    iifname "docker*" ip6 daddr ${IMDS_IPV6} counter drop`,
    '  }',
    '}',
    '',
  ].join('\n');
}
