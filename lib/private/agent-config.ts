import { Stack, Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { ConfigError, parseAgentConfig, type AgentConfigInput } from '../../core/contract';
import { invalidProp } from './validation';

/**
 * Values that pass the agent-config schema, used in place of CDK tokens (a bucket or subnet created in
 * the same stack) during the synth-time check. Tokens only resolve at deploy time, so the check covers
 * every literal part of the config and the shape of the whole; the tokens themselves are typed ids.
 */
function standIn(path: readonly (string | number)[]): string {
  const key = path[path.length - 1];
  const parent = path[path.length - 2];
  if (parent === 'buckets') return `stand-in--${String(key)}--x-s3`;
  if (parent === 'subnets') return 'subnet-0000000000000000';
  if (key === 'securityGroupId') return 'sg-0000000000000000';
  if (key === 'bucket') return 'stand-in-bucket';
  if (key === 'region') return 'us-east-1';
  if (key === 'expectedBucketOwner') return '123456789012';
  if (key === 'prefix') return 'stand-in/';
  return 'stand-in';
}

function withStandIns(value: unknown, path: (string | number)[] = []): unknown {
  if (typeof value === 'string') return Token.isUnresolved(value) ? standIn(path) : value;
  if (Array.isArray(value)) return value.map((v, i) => withStandIns(v, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, v === undefined ? v : withStandIns(v, [...path, k])]),
    );
  }
  return value;
}

/**
 * Validates an agent config built from construct props with the agent's own schema (tokens replaced by
 * stand-ins), and renders it as a deploy-time JSON string (tokens become `Fn::Join` parts). Throws with
 * the construct path and every bad field, one a line: each is named as in agent.json, after the prop that gives it
 * (`mounts.1.path` is `mounts[1].path`).
 */
export function renderAgentConfig(scope: IConstruct, config: AgentConfigInput): string {
  try {
    parseAgentConfig(withStandIns(config), 'from the construct props');
  } catch (e) {
    if (e instanceof ConfigError) invalidProp(scope, 'agent.json', e.message);
    throw e;
  }
  return Stack.of(scope).toJsonString(config);
}
