/**
 * The agent configuration (`/etc/mountfleet/agent.json`): written by the ComputeFleet construct from its
 * props, validated by the agent on start with this very schema. Versioned: bump AGENT_CONFIG_VERSION
 * on any incompatible change.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError, withoutTrailingSlash } from '../common';
import { ECS_TASK_CGROUP, ECS_UNIT } from './batch-host';
import { checkMountPath, checkMountPrefix } from './mount-path-rules';
import { FLEET_ID_PATTERN } from './tags';

export const AGENT_CONFIG_VERSION = 1;
export const DEFAULT_AGENT_CONFIG_PATH = '/etc/mountfleet/agent.json';

/** The Mountpoint release the agent installs, and the key its packages are signed with (from 1.22.2). */
export const MOUNTPOINT_DEFAULT_VERSION = '1.24.0';
export const MOUNTPOINT_KEY_FINGERPRINT = '8AEFE705EBE329C0948C75A66F1C3B3AEF4B030B';

/** Availability Zone ID, e.g. `use1-az4` (the same physical zone in every account, unlike AZ names). */
export const AZ_ID_PATTERN = /^[a-z]{2,4}[0-9]+-az[0-9]+$/;
/** S3 general purpose bucket names (3-63 chars, lower case, digits, dots, hyphens). */
export const BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** S3 Express One Zone directory bucket names: `base--<azid>--x-s3`, 3-63 chars in all. */
export const DIRECTORY_BUCKET_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*--[a-z]{2,4}[0-9]+-az[0-9]+--x-s3$/;

/**
 * How a mount caches. `none`: no cache (metadata re-validated on every open). `metadata`: metadata only.
 * `local`: local disk/memory data cache. `express`: the zone's S3 Express bucket. `local+express`: both,
 * disk first.
 */
export const CACHE_POLICIES = ['none', 'metadata', 'local', 'express', 'local+express'] as const;
export type CachePolicy = (typeof CACHE_POLICIES)[number];

/** Whether a mount with this policy reads through its zone's S3 Express cache (`--cache-xz`). */
export function cacheUsesExpress(policy: CachePolicy): boolean {
  return policy === 'express' || policy === 'local+express';
}

/** Whether a mount with this policy keeps a local data cache (`--cache` on the instance store or root volume). */
export function cacheUsesLocal(policy: CachePolicy): boolean {
  return policy === 'local' || policy === 'local+express';
}

/**
 * Whether Mountpoint may overwrite and delete existing objects of a mount (`--allow-overwrite --allow-delete`),
 * and so whether its role needs `s3:DeleteObject`: only a read-write mount of a mutable dataset. A read-write
 * immutable dataset is written once: new objects only.
 */
export function mountReplacesObjects(
  access: 'read-only' | 'read-write',
  dataset: 'immutable' | 'mutable',
): boolean {
  return access === 'read-write' && dataset === 'mutable';
}

/** The policy of a mount or volume that names none: `local+express` where there is an Express cache, else `local`. */
export function defaultCachePolicy(hasExpressCache: boolean): CachePolicy {
  return hasExpressCache ? 'local+express' : 'local';
}

/** Where `scratch run` mounts when neither `--path` nor agent.json names a directory. */
export const DEFAULT_SCRATCH_PATH = '/mnt/scratch';
/** Seconds a job gets after SIGTERM before its scratch is unmounted lazily. */
export const DEFAULT_TEARDOWN_GRACE_SECONDS = 20;
/** The longest teardown grace a fleet or a run may ask for: teardown must finish inside the termination hook. */
export const MAX_TEARDOWN_GRACE_SECONDS = 600;

/** A string checked by one of the core/contract/mount-path-rules.ts rules; the issue is the problem the rule names. */
export const checkedString = (check: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const problem = check(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
const mountPath = checkedString(checkMountPath);

const mountSchema = z
  .object({
    bucket: z.string().regex(BUCKET_NAME_PATTERN, 'must be an S3 bucket name (3-63 lower-case characters)'),
    prefix: checkedString(checkMountPrefix).default(''),
    path: mountPath,
    access: z.enum(['read-only', 'read-write']).default('read-only'),
    dataset: z.enum(['immutable', 'mutable']).default('mutable'),
    cache: z.enum(CACHE_POLICIES).default('local+express'),
    /** The account that must own the bucket (Mountpoint `--expected-bucket-owner`). */
    expectedBucketOwner: z
      .string()
      .regex(/^\d{12}$/, 'must be the 12-digit account id of the bucket owner')
      .optional(),
  })
  .strict();
export type MountConfig = z.infer<typeof mountSchema>;

export const agentConfigSchema = z
  .object({
    version: z.literal(AGENT_CONFIG_VERSION, {
      error: `must be ${AGENT_CONFIG_VERSION}: this agent reads agent.json version ${AGENT_CONFIG_VERSION}`,
    }),
    fleetId: z.string().regex(FLEET_ID_PATTERN, 'must be 1-32 lower-case letters, digits and hyphens'),
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be a Region name such as us-east-1'),
    mounts: z.array(mountSchema).default([]),
    expressCache: z
      .object({
        /** Directory bucket per AZ ID. */
        buckets: z.record(
          z.string().regex(AZ_ID_PATTERN, 'keys must be AZ IDs such as use1-az4'),
          z
            .string()
            .regex(DIRECTORY_BUCKET_NAME_PATTERN, 'must be a directory bucket name base--<azid>--x-s3'),
        ),
        /** How long the pre-mount probe may take before the zone counts as down. */
        probeTimeoutMs: z.number().int().min(100).max(30000).default(1500),
        /** How often the watchdog probes while mounted. */
        probeIntervalMs: z.number().int().min(250).max(60000).default(2000),
      })
      .strict()
      .optional(),
    scratch: z
      .object({
        securityGroupId: z
          .string()
          .regex(/^sg-[0-9a-f]+$/, 'must be a security group id such as sg-0123abcd'),
        /** Subnet for the mount target, per AZ ID. */
        subnets: z.record(
          z.string().regex(AZ_ID_PATTERN, 'keys must be AZ IDs such as use1-az4'),
          z.string().regex(/^subnet-[0-9a-f]+$/, 'must be a subnet id such as subnet-0123abcd'),
        ),
        /** Where `scratch run` mounts when `--path` is not given. */
        path: mountPath.default(DEFAULT_SCRATCH_PATH),
        /** Seconds CMD gets after SIGTERM before a lazy unmount. */
        teardownGraceSeconds: z
          .number()
          .int()
          .min(0)
          .max(MAX_TEARDOWN_GRACE_SECONDS)
          .default(DEFAULT_TEARDOWN_GRACE_SECONDS),
        /** KMS key for the file systems; the AWS managed key when unset. */
        kmsKeyId: z.string().optional(),
      })
      .strict()
      .optional(),
    /**
     * Set on a Batch fleet's instances (BatchComputeFleet): jobs run in containers the ECS agent starts, whose
     * binds of the mount paths are taken once, at container start (Docker binds rprivate). The agent then keeps
     * the ready file (MOUNTS_READY_FILE in its run directory) only while every mount is live, stops the ECS agent's
     * unit while one is not, and ends a job container whose bind is of a mount that is no longer the live one.
     */
    containers: z
      .object({
        /** Where the ECS agent puts task containers, relative to the cgroup v2 root (AL2023: ecstasks.slice). */
        taskCgroup: z
          .string()
          .regex(/^[A-Za-z0-9_.@-]+(\/[A-Za-z0-9_.@-]+)*$/, 'must be a cgroup path such as ecstasks.slice')
          .default(ECS_TASK_CGROUP),
        /** The systemd unit that starts jobs (the ECS agent): stopped while a mount is down, started once all are live. */
        jobStarterUnit: z
          .string()
          .regex(/^[A-Za-z0-9_.@-]+\.service$/, 'must be a systemd service unit such as ecs.service')
          .default(ECS_UNIT),
      })
      .strict()
      .optional(),
    /**
     * The Auto Scaling termination lifecycle hook (written by ComputeFleet): the agent tears down, then
     * completes it (group name from autoscaling:DescribeAutoScalingInstances on its own instance id).
     */
    lifecycleHook: z
      .object({ name: z.string().regex(/^[A-Za-z0-9\-_/]{1,255}$/, 'must be a lifecycle hook name') })
      .strict()
      .optional(),
    mountpoint: z
      .object({
        version: z
          .string()
          .regex(/^\d+\.\d+\.\d+$/, 'must be a release such as 1.24.0')
          .default(MOUNTPOINT_DEFAULT_VERSION),
        keyFingerprint: z
          .string()
          .transform((s) => s.replace(/\s+/g, '').toUpperCase())
          .pipe(z.string().regex(/^[0-9A-F]{40}$/, 'must be a 40-hex-digit OpenPGP fingerprint'))
          .default(MOUNTPOINT_KEY_FINGERPRINT),
      })
      .strict()
      .default({ version: MOUNTPOINT_DEFAULT_VERSION, keyFingerprint: MOUNTPOINT_KEY_FINGERPRINT }),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const paths = cfg.mounts.map((m) => withoutTrailingSlash(m.path));
    paths.forEach((p, i) => {
      paths.forEach((q, j) => {
        if (i < j && (p === q || p.startsWith(q + '/') || q.startsWith(p + '/'))) {
          ctx.addIssue({
            code: 'custom',
            path: ['mounts', j, 'path'],
            message: `conflicts with mounts[${i}].path ${cfg.mounts[i].path}: mount paths must not be equal or nested`,
          });
        }
      });
    });
    cfg.mounts.forEach((m, i) => {
      if (m.access === 'read-write' && m.prefix === '') {
        ctx.addIssue({
          code: 'custom',
          path: ['mounts', i, 'prefix'],
          message:
            'a read-write mount needs a prefix (for example "outputs/") so it cannot overwrite the whole bucket',
        });
      }
    });
  });

export type AgentConfig = z.infer<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;

export class ConfigError extends UsageError {
  override readonly name: string = 'ConfigError';
}

/** Formats zod issues under a heading, as `field.path: message` lines, one per problem. */
export function formatIssues(error: z.ZodError, heading: string): string {
  const lines = error.issues.map((i) => {
    // A bad record key reports "Invalid key in record"; the key schema's own message says what to do.
    const message = i.code === 'invalid_key' && i.issues.length ? `key ${i.issues[0].message}` : i.message;
    return `  ${i.path.length ? i.path.join('.') : '(root)'}: ${message}`;
  });
  return `${heading}:\n${lines.join('\n')}`;
}

/**
 * Reads and parses a JSON file. `what` names it in errors ("agent config"), `hint` says how to point
 * at another file; `toError` makes the caller's own error type.
 */
export function readJsonFile(
  path: string,
  what: string,
  toError: (message: string) => Error,
  hint = '',
): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw toError(`cannot read ${what} ${path}: ${(e as Error).message}${hint}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw toError(`${what} ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Validates a parsed value; throws ConfigError naming every bad field. */
export function parseAgentConfig(value: unknown, source = '(inline)'): AgentConfig {
  if (looksLikeAppConfig(value)) throw new ConfigError(`${source} ${APP_CONFIG_NOT_AGENT_CONFIG}`);
  const result = agentConfigSchema.safeParse(value);
  if (!result.success) throw new ConfigError(formatIssues(result.error, `invalid agent config ${source}`));
  return result.data;
}

const APP_CONFIG_NOT_AGENT_CONFIG =
  "is the CDK app's config (fleetId, network, fleet.mounts …, as in examples/mountfleet.config.json), not an " +
  'agent config: the agent reads the agent.json that ComputeFleet writes to /etc/mountfleet/agent.json on each ' +
  'instance (version, fleetId, region, mounts …); pass one like examples/agent.json';

/**
 * The two configs are easy to mix up (both name a fleet and its mounts); the app config's sections that an
 * agent.json never has tell it apart, so the error can say which file is which instead of listing fields.
 */
function looksLikeAppConfig(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || 'version' in value) return false;
  return ['fleet', 'network', 'reaper', 'monitoring', 'environments'].some((key) => key in value);
}

/** Reads and validates agent.json (path from the argument, MOUNTFLEET_CONFIG, or the default). */
export function loadAgentConfig(
  path = process.env.MOUNTFLEET_CONFIG ?? DEFAULT_AGENT_CONFIG_PATH,
): AgentConfig {
  const json = readJsonFile(
    path,
    'agent config',
    (m) => new ConfigError(m),
    ' (pass --config FILE or set MOUNTFLEET_CONFIG)',
  );
  return parseAgentConfig(json, path);
}
