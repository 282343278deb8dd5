/**
 * What the fleet's Batch functions (submit and teardown) know of their fleet, from the environment the stack gives
 * them (BATCH_FUNCTION_ENV): the fleet, its queues, the host paths a job may bind, the one job role, the scratch key.
 * A caller never supplies these: they bound what any request can ask for.
 */
import { BATCH_FUNCTION_ENV } from '../contract';
import type { HostAccessRules } from './host-access';

export interface BatchFleetSettings extends HostAccessRules {
  readonly fleetId: string;
  /** The fleet's job-queue ARNs: the only queues a job goes to, and the only ones whose events count. */
  readonly queueArns: readonly string[];
  /** The fleet's scratch KMS key; the AWS managed key for EFS when unset. */
  readonly kmsKeyId?: string;
}

/** The settings from a function's environment; throws naming the variable that is missing. */
export function batchSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): BatchFleetSettings {
  const required = (name: string, what: string): string => {
    const value = env[name];
    if (!value) throw new Error(`${name} is not set: the function cannot tell ${what}`);
    return value;
  };
  const list = (name: string, separator: string) => (env[name] ?? '').split(separator).filter(Boolean);
  const fleetId = required(BATCH_FUNCTION_ENV.fleetId, 'its fleet');
  required(BATCH_FUNCTION_ENV.queueArns, "the fleet's job queues");
  return {
    fleetId,
    queueArns: list(BATCH_FUNCTION_ENV.queueArns, ','),
    mountPaths: list(BATCH_FUNCTION_ENV.mountPaths, ':'),
    jobRoleArn: required(BATCH_FUNCTION_ENV.jobRoleArn, "the fleet's job role"),
    ...(env[BATCH_FUNCTION_ENV.kmsKeyId] ? { kmsKeyId: env[BATCH_FUNCTION_ENV.kmsKeyId] } : {}),
  };
}
