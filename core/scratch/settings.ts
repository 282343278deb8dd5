/**
 * Where `scratch` gets its settings: command-line flags first, then the fleet's agent.json. Flags alone
 * are enough (fleet, subnet, security group), so the command also works on an instance that is not part
 * of a deployed fleet.
 */
import { existsSync } from 'node:fs';
import {
  DEFAULT_AGENT_CONFIG_PATH,
  DEFAULT_SCRATCH_PATH,
  DEFAULT_TEARDOWN_GRACE_SECONDS,
  loadAgentConfig,
  MAX_TEARDOWN_GRACE_SECONDS,
  type AgentConfig,
  checkMountPath,
  fleetIdProblem,
} from '../contract';
import { withoutTrailingSlash } from '../common';

export class ScratchSettingsError extends Error {
  override readonly name = 'ScratchSettingsError';
}

export interface ScratchFlags {
  readonly fleet?: string;
  readonly subnet?: string;
  readonly securityGroup?: string;
  readonly path?: string;
  readonly teardownGraceSeconds?: number;
}

export interface ScratchSettings {
  readonly fleetId: string;
  readonly subnetId: string;
  readonly securityGroupId: string;
  readonly path: string;
  readonly teardownGraceSeconds: number;
  readonly kmsKeyId?: string;
}

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
    throw new ScratchSettingsError(
      `no fleet: pass --fleet ID, or run where ${DEFAULT_AGENT_CONFIG_PATH} exists (or pass --config FILE)`,
    );
  }
  const problem = fleetIdProblem(fleetId);
  if (problem) throw new ScratchSettingsError(problem);
  return fleetId;
}

/** The mount path from the flag or agent.json (else /mnt/scratch), validated, without a trailing slash. */
export function resolveScratchPath(flag: string | undefined, config: AgentConfig | undefined): string {
  const path = flag ?? config?.scratch?.path ?? DEFAULT_SCRATCH_PATH;
  const problem = checkMountPath(path);
  if (problem) throw new ScratchSettingsError(`--path: ${problem}`);
  return withoutTrailingSlash(path);
}

/** Everything `scratch run` needs, for an instance in `availabilityZoneId`. */
export function resolveScratchSettings(
  flags: ScratchFlags,
  config: AgentConfig | undefined,
  availabilityZoneId: string,
): ScratchSettings {
  const fleetId = resolveFleetId(flags.fleet, config);
  const scratch = config?.scratch;
  const subnetId = flags.subnet ?? scratch?.subnets[availabilityZoneId];
  if (subnetId === undefined) {
    const known = Object.keys(scratch?.subnets ?? {});
    throw new ScratchSettingsError(
      `no scratch subnet for this instance's zone ${availabilityZoneId}: pass --subnet SUBNET_ID` +
        (scratch
          ? ` (agent.json scratch.subnets has ${known.join(', ') || 'none'})`
          : ' (agent.json has no scratch section)'),
    );
  }
  if (!/^subnet-[0-9a-f]+$/.test(subnetId)) {
    throw new ScratchSettingsError(`--subnet ${subnetId}: must be a subnet id such as subnet-0123abcd`);
  }
  const securityGroupId = flags.securityGroup ?? scratch?.securityGroupId;
  if (securityGroupId === undefined) {
    throw new ScratchSettingsError(
      'no scratch security group: pass --security-group SG_ID (agent.json has no scratch section)',
    );
  }
  if (!/^sg-[0-9a-f]+$/.test(securityGroupId)) {
    throw new ScratchSettingsError(
      `--security-group ${securityGroupId}: must be a security group id such as sg-0123abcd`,
    );
  }
  const path = resolveScratchPath(flags.path, config);
  const teardownGraceSeconds =
    flags.teardownGraceSeconds ?? scratch?.teardownGraceSeconds ?? DEFAULT_TEARDOWN_GRACE_SECONDS;
  if (
    !Number.isInteger(teardownGraceSeconds) ||
    teardownGraceSeconds < 0 ||
    teardownGraceSeconds > MAX_TEARDOWN_GRACE_SECONDS
  ) {
    throw new ScratchSettingsError(
      `--teardown-grace ${teardownGraceSeconds}: must be a whole number of seconds, 0-${MAX_TEARDOWN_GRACE_SECONDS}`,
    );
  }
  return {
    fleetId,
    subnetId,
    securityGroupId,
    path,
    teardownGraceSeconds,
    ...(scratch?.kmsKeyId ? { kmsKeyId: scratch.kmsKeyId } : {}),
  };
}
