/**
 * Where `scratch` gets its settings: command-line flags first, then the fleet's agent.json, merged through the
 * agent.json schema's own rules and defaults (core/contract/agent-config.ts), so a flag is held to the rule its
 * agent.json field is. Flags alone are enough (fleet, subnet, security group), so the command also works on an
 * instance that is not part of a deployed fleet.
 */
import { existsSync } from 'node:fs';
import type { z } from 'zod';
import { UsageError } from '../common';
import {
  DEFAULT_AGENT_CONFIG_PATH,
  MAX_TEARDOWN_GRACE_SECONDS,
  agentConfigSchema,
  fleetIdProblem,
  loadAgentConfig,
  type AgentConfig,
} from '../contract';

/** The rules of agent.json's `scratch` section, field by field. */
const SCRATCH_RULES = agentConfigSchema.shape.scratch.unwrap().shape;

/**
 * The agent config when there is one: an explicit path (flag or MOUNTFLEET_CONFIG) must exist and be
 * valid; the default path may be absent (an instance outside any fleet, configured by flags).
 */
export function loadOptionalAgentConfig(
  explicitPath: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): AgentConfig | undefined {
  const path = explicitPath ?? (env.MOUNTFLEET_CONFIG || undefined);
  if (path !== undefined) return loadAgentConfig(path);
  return existsSync(DEFAULT_AGENT_CONFIG_PATH) ? loadAgentConfig(DEFAULT_AGENT_CONFIG_PATH) : undefined;
}

/** The fleet id from a flag or agent.json, validated. */
export function resolveFleetId(flag: string | undefined, config: AgentConfig | undefined): string {
  const fleetId = flag ?? config?.fleetId;
  if (fleetId === undefined) {
    throw new UsageError(
      `no fleet: pass --fleet ID, or run where ${DEFAULT_AGENT_CONFIG_PATH} exists (or pass --config FILE)`,
    );
  }
  const problem = fleetIdProblem(fleetId);
  if (problem) throw new UsageError(problem);
  return fleetId;
}

/** The flags that override agent.json's `scratch` section for a run. */
interface ZoneFlags {
  readonly subnet?: string;
  readonly securityGroup?: string;
  readonly teardownGraceSeconds?: number;
}

/** What a run in one zone takes from the flags and agent.json's `scratch` section (held to agent.json's rules). */
export interface ZoneSettings {
  readonly subnetId: string;
  readonly securityGroupId: string;
  readonly teardownGraceSeconds: number;
  readonly kmsKeyId?: string;
}

/** Holds the value to agent.json's rule for the field the flag overrides. */
function checkByRule(flag: string, value: string, rule: z.ZodType<string>): void {
  const checked = rule.safeParse(value);
  if (!checked.success) throw new UsageError(`${flag} ${value}: ${checked.error.issues[0].message}`);
}

/** The mount target's subnet (agent.json's for `availabilityZoneId`) and security group, the grace and the key. */
export function zoneSettings(
  flags: ZoneFlags,
  config: AgentConfig | undefined,
  availabilityZoneId: string,
): ZoneSettings {
  const scratch = config?.scratch;
  const subnetId = flags.subnet ?? scratch?.subnets[availabilityZoneId];
  if (subnetId === undefined) {
    const known = Object.keys(scratch?.subnets ?? {});
    throw new UsageError(
      `no scratch subnet for this instance's zone ${availabilityZoneId}: pass --subnet SUBNET_ID` +
        (scratch
          ? ` (agent.json scratch.subnets has ${known.join(', ') || 'none'})`
          : ' (agent.json has no scratch section)'),
    );
  }
  checkByRule('--subnet', subnetId, SCRATCH_RULES.subnets.valueType);
  const securityGroupId = flags.securityGroup ?? scratch?.securityGroupId;
  if (securityGroupId === undefined) {
    throw new UsageError(
      'no scratch security group: pass --security-group SG_ID (agent.json has no scratch section)',
    );
  }
  checkByRule('--security-group', securityGroupId, SCRATCH_RULES.securityGroupId);
  const givenGrace = flags.teardownGraceSeconds ?? scratch?.teardownGraceSeconds;
  // Neither given: the schema's default.
  const grace = SCRATCH_RULES.teardownGraceSeconds.safeParse(givenGrace);
  if (!grace.success) {
    throw new UsageError(
      `--teardown-grace ${givenGrace}: must be a whole number of seconds, 0-${MAX_TEARDOWN_GRACE_SECONDS}`,
    );
  }
  return {
    subnetId,
    securityGroupId,
    teardownGraceSeconds: grace.data,
    ...(scratch?.kmsKeyId ? { kmsKeyId: scratch.kmsKeyId } : {}),
  };
}
