/**
 * `--region` and `--profile` for the commands that call AWS, and the check that runs before their first
 * call: a missing Region or missing credentials is one short message within seconds, not an SDK error
 * after its retries (or after IMDS timeouts on a laptop).
 */
import { Option } from 'commander';
import { UsageError } from '../core/common';
import { efsClient } from '../core/aws';

export interface AwsFlags {
  region?: string;
  profile?: string;
}

/** How long resolving credentials may take: the default chain ends at IMDS, which a laptop does not answer. */
export const CREDENTIALS_TIMEOUT_MS = 5000;

const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** `--region` for a command that calls AWS (add `profileOption()` beside it). */
export function regionOption(): Option {
  return new Option(
    '--region <region>',
    "AWS Region, e.g. us-east-1 (default: AWS_REGION, else the profile's)",
  );
}

/** `--profile` for a command that calls AWS. */
export function profileOption(): Option {
  return new Option('--profile <name>', 'named profile of the AWS config files (default: AWS_PROFILE)');
}

/**
 * Applies `--region`/`--profile` (through the SDK's own variables, so every client built afterwards uses
 * them) and checks, with the SDK's own default chains, that a Region and credentials are there. The Region
 * is `--region`, else `configRegion` (agent.json's, where the command reads one), else the SDK's chain
 * (AWS_REGION, the profile's `region`). Resolves to it; throws a UsageError when either is missing (nothing
 * was sent to AWS; the message says how to set them).
 */
export async function resolveAws(flags: AwsFlags, configRegion?: string): Promise<string> {
  const setUp = await checkAws(flags, configRegion);
  if ('missing' in setUp) throw new UsageError(setUp.missing);
  return setUp.region;
}

/**
 * For a command to which the API is optional (`tune`): true when a Region and credentials are there; false,
 * after `fallBack` is told what is missing, when they are not and neither `--region` nor `--profile` asked for
 * the API (then, as a bad `--region`, it is a UsageError).
 */
export async function canCallAws(flags: AwsFlags, fallBack: (missing: string) => void): Promise<boolean> {
  if (flags.region !== undefined || flags.profile !== undefined) {
    await resolveAws(flags);
    return true;
  }
  const setUp = await checkAws(flags);
  if ('missing' in setUp) fallBack(setUp.missing);
  return !('missing' in setUp);
}

/** resolveAws's work: the Region, or what is missing, said with how to set it; a bad `--region` is a UsageError. */
async function checkAws(
  flags: AwsFlags,
  configRegion?: string,
): Promise<{ readonly region: string } | { readonly missing: string }> {
  if (flags.region !== undefined && !REGION_PATTERN.test(flags.region)) {
    throw new UsageError(`--region "${flags.region}": must be a Region such as us-east-1`);
  }
  if (flags.profile !== undefined) process.env.AWS_PROFILE = flags.profile;
  if (flags.region !== undefined) process.env.AWS_REGION = flags.region;
  const region = flags.region ?? configRegion;
  const probe = efsClient(region ? { region } : {});
  try {
    const resolved = await probe.config.region().catch(() => undefined);
    if (resolved === undefined) {
      return {
        missing:
          'no AWS Region: pass --region (e.g. --region us-east-1), set AWS_REGION, or give the profile a region (`aws configure`)',
      };
    }
    const failure = await withinTimeout(probe.config.credentials(), CREDENTIALS_TIMEOUT_MS).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    if (failure === undefined) return { region: resolved };
    const profile = process.env.AWS_PROFILE;
    return {
      missing:
        `no AWS credentials${profile ? ` for profile "${profile}"` : ''} (${failure.message}): set ` +
        'AWS_PROFILE or pass --profile, run `aws configure` (or `aws sso login`), or run on an instance with a role',
    };
  } finally {
    probe.destroy();
  }
}

function withinTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not resolved within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
