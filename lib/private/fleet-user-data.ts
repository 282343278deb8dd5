/**
 * What a ComputeFleet instance runs at boot: the agent bundle as an asset (its object readable by the
 * instance role, its sha256 checked before it runs) and the user data that installs the prerequisites,
 * writes agent.json and starts the agent's unit.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import type { Construct } from 'constructs';
import { DEFAULT_AGENT_CONFIG_PATH, agentPaths, packageRoot } from '../../core/contract';
import {
  AGENT_BUNDLE_PATH,
  AGENT_UNIT_NAME,
  agentUnit,
  installCloudWatchAgentCommands,
  installEfsUtilsCommands,
  installNodeCommands,
  launcherCommands,
  retryFunctionCommands,
  verifyBundleCommands,
  writeFileCommand,
} from './user-data';
import { invalidProp } from './validation';

/** The pre-built agent bundle as an asset of `scope`, and its sha256. */
interface AgentBundle {
  readonly asset: s3assets.Asset;
  readonly sha256: string;
}

/**
 * The agent bundle (dist/agent/mountfleet.js) as the asset `AgentBundle` of `scope`, readable by `role`:
 * exactly the bundle object, not the whole assets bucket that Asset.grantRead would open.
 */
export function agentBundle(scope: Construct, role: iam.IGrantable): AgentBundle {
  const path = join(packageRoot(), 'dist', 'agent', 'mountfleet.js');
  if (!existsSync(path)) {
    invalidProp(
      scope,
      'agent',
      `the agent bundle ${path} does not exist`,
      'run `node scripts/bundle.mjs` (npm run build does)',
    );
  }
  const bundle = {
    asset: new s3assets.Asset(scope, 'AgentBundle', { path }),
    sha256: createHash('sha256').update(readFileSync(path)).digest('hex'),
  };
  iam.Grant.addToPrincipal({
    grantee: role,
    actions: ['s3:GetObject'],
    resourceArns: [bundle.asset.bucket.arnForObjects(bundle.asset.s3ObjectKey)],
  });
  return bundle;
}

/** What goes into {@link fleetUserData}. */
interface FleetUserDataOptions {
  readonly bundle: AgentBundle;
  /** agent.json as a deploy-time JSON string. */
  readonly agentConfigJson: string;
  /** Installs efs-utils, which scratch mounts need. */
  readonly scratch: boolean;
  /** Commands that run first, before any step that can fail (BatchComputeFleet's ECS start gate). */
  readonly firstCommands?: readonly string[];
  /** Installs beyond the shared ones, run with them (through `retry`) before the agent starts. */
  readonly installCommands?: readonly string[];
}

/** The user data: prerequisites, the checked bundle and its launcher, agent.json, the agent's unit started. */
export function fleetUserData(scope: Construct, options: FleetUserDataOptions): ec2.UserData {
  const userData = ec2.UserData.forLinux();
  userData.addCommands(
    'set -euo pipefail',
    ...(options.firstCommands ?? []),
    ...retryFunctionCommands(),
    ...installNodeCommands(),
    ...(options.scratch ? installEfsUtilsCommands() : []),
    ...(options.installCommands ?? []),
    // Mountpoint always exports OTLP metrics to the local CloudWatch agent (see the agent's tuning).
    ...installCloudWatchAgentCommands(scope, agentPaths({}).cloudWatchAgentConfigFile),
  );
  userData.addS3DownloadCommand({
    bucket: options.bundle.asset.bucket,
    bucketKey: options.bundle.asset.s3ObjectKey,
    localFile: AGENT_BUNDLE_PATH,
    region: Stack.of(scope).region,
  });
  userData.addCommands(
    ...verifyBundleCommands(scope, AGENT_BUNDLE_PATH, options.bundle.sha256),
    ...launcherCommands(),
    ...writeFileCommand(scope, DEFAULT_AGENT_CONFIG_PATH, options.agentConfigJson, '0644'),
    ...writeFileCommand(scope, `/etc/systemd/system/${AGENT_UNIT_NAME}`, agentUnit(), '0644'),
    'systemctl daemon-reload',
    `systemctl enable --now ${AGENT_UNIT_NAME}`,
  );
  return userData;
}
