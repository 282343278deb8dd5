/**
 * The bundled app's configuration: cdk.json context key `mountfleet` (an object), or a JSON file named by
 * context `mountfleetConfig=path.json`. Every field has a default, so `cdk synth` works with no config.
 * See examples/mountfleet.config.json.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  ConfigError,
  AZ_ID_PATTERN,
  BUCKET_NAME_PATTERN,
  CACHE_POLICIES,
  checkedString,
  formatIssues,
  MAX_TEARDOWN_GRACE_SECONDS,
  readJsonFile,
  checkMountPath,
  checkMountPrefix,
  FLEET_ID_PATTERN,
  REAPER_SETTING_RANGES,
  type ReaperNumericSetting,
} from '../core/contract';
import type { ResolvedStackConfig } from './stack-config';

/** AZ IDs that exist in every account of us-east-1 (AZ IDs, unlike names, are the same everywhere). */
export const DEFAULT_AZ_IDS = ['use1-az4', 'use1-az6'];

const azId = z
  .string()
  .regex(AZ_ID_PATTERN, 'must be an AZ ID such as use1-az4 (not an AZ name like us-east-1a)');
const azIds = z.array(azId).min(1, 'must list at least one AZ ID');

/** A reaper setting within the bounds the reaper Lambda itself enforces. */
const reaperSetting = (name: ReaperNumericSetting) =>
  z.number().int().min(REAPER_SETTING_RANGES[name].min).max(REAPER_SETTING_RANGES[name].max).optional();

const mount = z
  .object({
    bucket: z.string().regex(BUCKET_NAME_PATTERN, 'must be an S3 bucket name'),
    prefix: checkedString(checkMountPrefix).optional(),
    path: checkedString(checkMountPath),
    access: z.enum(['read-only', 'read-write']).optional(),
    dataset: z.enum(['immutable', 'mutable']).optional(),
    cache: z.enum(CACHE_POLICIES).optional(),
    /** The bucket's account, when it is not the stack's (Mountpoint refuses a bucket of another owner). */
    bucketOwner: z
      .string()
      .regex(/^\d{12}$/, 'must be the 12-digit account id of the bucket owner')
      .optional(),
  })
  .strict();

const sections = {
  /** Fleet id: tags, IAM conditions, names. */
  fleetId: z.string().regex(FLEET_ID_PATTERN, 'must be 1-32 lower-case letters, digits and hyphens'),
  /** `aws` (an internet-routed network) or `sandbox` (the local emulator: VPC and subnets only, named cache buckets). */
  profile: z.enum(['aws', 'sandbox']),
  account: z.string().regex(/^\d{12}$/, 'must be a 12-digit account id'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be a Region such as us-east-1'),
  network: z.union([
    z.object({ azIds, cidr: z.string().optional(), isolated: z.boolean().optional() }).strict(),
    z
      .object({
        vpcId: z.string().regex(/^vpc-[0-9a-f]+$/, 'must be a VPC id such as vpc-0123abcd'),
        subnetIds: z.record(azId, z.string().regex(/^subnet-[0-9a-f]+$/, 'must be a subnet id')),
      })
      .strict(),
  ]),
  expressCache: z
    .object({
      enabled: z.boolean().optional(),
      azIds: azIds.optional(),
      bucketBaseName: z.string().optional(),
      expirationDays: z.number().int().min(1).optional(),
    })
    .strict(),
  fleet: z
    .object({
      instanceTypes: z.array(z.string()).min(1).optional(),
      minCapacity: z.number().int().min(0).optional(),
      maxCapacity: z.number().int().min(0).optional(),
      desiredCapacity: z.number().int().min(0).optional(),
      onDemandBaseCapacity: z.number().int().min(0).optional(),
      onDemandPercentageAboveBaseCapacity: z.number().int().min(0).max(100).optional(),
      rootVolumeGiB: z.number().int().min(8).optional(),
      mounts: z.array(mount).optional(),
      /** `asg`: an Auto Scaling group for your own scheduler; `batch`: AWS Batch compute environments and queues. */
      scheduler: z.enum(['asg', 'batch']).optional(),
      /** Batch only: most Spot vCPUs per zone. */
      spotMaxvCpus: z.number().int().min(0).optional(),
      /** Batch only: most On-Demand vCPUs per zone (after Spot in each queue). */
      onDemandMaxvCpus: z.number().int().min(0).optional(),
    })
    .strict(),
  scratch: z
    .object({
      enabled: z.boolean().optional(),
      mountPath: checkedString(checkMountPath).optional(),
      teardownGraceSeconds: z.number().int().min(0).max(MAX_TEARDOWN_GRACE_SECONDS).optional(),
    })
    .strict(),
  reaper: z
    .object({
      dryRun: z.boolean().optional(),
      scheduleMinutes: z.number().int().min(1).max(1440).optional(),
      graceMinutes: reaperSetting('graceMinutes'),
      idleWindowMinutes: reaperSetting('idleWindowMinutes'),
      maxDeletionsPerRun: reaperSetting('maxDeletionsPerRun'),
      deletionAlarmThreshold: z.number().int().min(0).optional(),
    })
    .strict(),
  monitoring: z
    .object({
      alarms: z.boolean().optional(),
      dashboard: z.boolean().optional(),
      /** An existing SNS topic the alarms notify. */
      alarmTopicArn: z
        .string()
        .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN')
        .optional(),
    })
    .strict(),
};

const stackSettings = z.object(sections).partial().strict();
const appConfigSchema = stackSettings
  .extend({
    /** One stack per environment; each may override any section (merged one level deep). */
    environments: z
      .record(
        z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'keys must be names such as dev or prod'),
        stackSettings,
      )
      .optional(),
  })
  .strict();

export type AppConfigInput = z.input<typeof appConfigSchema>;
type StackSettings = z.infer<typeof stackSettings>;

export class AppConfigError extends ConfigError {
  override readonly name: string = 'AppConfigError';
}

/**
 * Validates a config value and resolves it into one stack config per environment. Only an absent config
 * (undefined) means the defaults: `null` or any other non-object is a mistake, not a request for them.
 */
export function resolveAppConfig(value: unknown, source: string): ResolvedStackConfig[] {
  if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new AppConfigError(
      `invalid mountfleet config ${source}:\n  (root): must be a JSON object such as {"fleetId": "training"}, not ${JSON.stringify(value)} — remove it to deploy the defaults`,
    );
  }
  const parsed = appConfigSchema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new AppConfigError(formatIssues(parsed.error, `invalid mountfleet config ${source}`));
  }
  const { environments, ...shared } = parsed.data;
  if (!environments || Object.keys(environments).length === 0)
    return [resolveStack('Mountfleet', shared, source, '')];
  const stacks = Object.entries(environments).map(([name, overrides]) =>
    resolveStack(`Mountfleet-${name}`, merge(shared, overrides), source, `environments.${name}.`),
  );
  // Two fleets with one id in one account and Region would reap each other's scratch file systems.
  const seen = new Map<string, string>();
  for (const s of stacks) {
    const key = `${s.account ?? '(deploy account)'} ${s.region} ${s.fleetId}`;
    const other = seen.get(key);
    if (other) {
      throw new AppConfigError(
        `invalid mountfleet config ${source}:\n  environments.${s.stackName.slice('Mountfleet-'.length)}.fleetId: "${s.fleetId}" is also the fleet id of ${other} in the same account and Region — give each environment its own fleetId (their reapers would delete each other's scratch)`,
      );
    }
    seen.set(key, s.stackName);
  }
  return stacks;
}

function merge(shared: StackSettings, overrides: StackSettings): StackSettings {
  const out: Record<string, unknown> = { ...shared };
  for (const [key, value] of Object.entries(overrides)) {
    const base = out[key];
    out[key] =
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      base &&
      typeof base === 'object' &&
      key !== 'network'
        ? { ...base, ...value }
        : value;
  }
  return out as StackSettings;
}

function resolveStack(stackName: string, s: StackSettings, source: string, at: string): ResolvedStackConfig {
  const fail = (field: string, problem: string): never => {
    throw new AppConfigError(`invalid mountfleet config ${source}:\n  ${at}${field}: ${problem}`);
  };
  const profile = s.profile ?? 'aws';
  const sandbox = profile === 'sandbox';
  const given = s.network ?? { azIds: DEFAULT_AZ_IDS };
  // The emulator cannot delete gateways, routes or endpoints: sandbox networks are VPC + subnets only.
  const network = 'azIds' in given ? { ...given, isolated: given.isolated ?? sandbox } : given;
  const networkZones = 'azIds' in network ? network.azIds : Object.keys(network.subnetIds);
  const alarms = s.monitoring?.alarms ?? true;
  if (!alarms && s.monitoring?.alarmTopicArn !== undefined) {
    fail(
      'monitoring.alarmTopicArn',
      'is set but monitoring.alarms is false — turn alarms on or leave it out',
    );
  }
  const scheduler = s.fleet?.scheduler ?? 'asg';
  const otherScheduler: Record<string, readonly string[]> = {
    asg: ['spotMaxvCpus', 'onDemandMaxvCpus'],
    batch: [
      'minCapacity',
      'maxCapacity',
      'desiredCapacity',
      'onDemandBaseCapacity',
      'onDemandPercentageAboveBaseCapacity',
    ],
  };
  for (const field of otherScheduler[scheduler]) {
    if (s.fleet && field in s.fleet) {
      fail(
        `fleet.${field}`,
        `is not used with fleet.scheduler "${scheduler}" — remove it, or set fleet.scheduler to "${scheduler === 'asg' ? 'batch' : 'asg'}"`,
      );
    }
  }
  const cacheEnabled = s.expressCache?.enabled ?? true;
  const fleetId = s.fleetId ?? 'mountfleet';
  return {
    stackName,
    fleetId,
    profile,
    account: s.account,
    region: s.region ?? 'us-east-1',
    network,
    expressCache: cacheEnabled
      ? {
          azIds: s.expressCache?.azIds ?? networkZones,
          // The emulator cannot create directory buckets: the sandbox names them so it can stand in for them.
          bucketBaseName: s.expressCache?.bucketBaseName ?? (sandbox ? `${fleetId}-cache` : undefined),
          expirationDays: s.expressCache?.expirationDays ?? 7,
        }
      : undefined,
    fleet: { ...s.fleet, scheduler: s.fleet?.scheduler ?? 'asg' },
    scratch:
      (s.scratch?.enabled ?? true)
        ? { mountPath: s.scratch?.mountPath, teardownGraceSeconds: s.scratch?.teardownGraceSeconds }
        : undefined,
    reaper: s.reaper ?? {},
    monitoring: {
      alarms,
      dashboard: s.monitoring?.dashboard ?? true,
      ...(s.monitoring?.alarmTopicArn ? { alarmTopicArn: s.monitoring.alarmTopicArn } : {}),
    },
  };
}

/** What the app reads from CDK context (`node.tryGetContext`). */
interface ContextReader {
  tryGetContext(key: string): unknown;
}

/**
 * Reads the config from context: `mountfleetConfig` (a JSON file path, relative to the working directory)
 * wins over the `mountfleet` object (cdk.json, or `-c mountfleet='{"…"}'` as a JSON string).
 */
export function loadAppConfig(context: ContextReader): ResolvedStackConfig[] {
  const file = context.tryGetContext('mountfleetConfig');
  if (typeof file === 'string' && file !== '') {
    const path = resolve(file);
    return resolveAppConfig(
      readJsonFile(path, 'mountfleet config', (m) => new AppConfigError(m)),
      path,
    );
  }
  let inline = context.tryGetContext('mountfleet');
  if (typeof inline === 'string') {
    try {
      inline = JSON.parse(inline);
    } catch (e) {
      throw new AppConfigError(`context "mountfleet" is not valid JSON: ${(e as Error).message}`);
    }
  }
  return resolveAppConfig(inline, '(context "mountfleet")');
}
