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

/** No Region or no credentials: nothing was sent to AWS; the message says how to set them. */
export class AwsSetupError extends UsageError {}

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
 * (AWS_REGION, the profile's `region`). Resolves to it; throws AwsSetupError when either is missing.
 */
export async function resolveAws(flags: AwsFlags, configRegion?: string): Promise<string> {
  if (flags.region !== undefined && !REGION_PATTERN.test(flags.region)) {
    throw new UsageError(`--region "${flags.region}": must be a Region such as us-east-1`);
  }
  if (flags.profile !== undefined) process.env.AWS_PROFILE = flags.profile;
  if (flags.region !== undefined) process.env.AWS_REGION = flags.region;
  const region = flags.region ?? configRegion;
  const probe = efsClient(region ? { region } : {});
  try {
    let resolved: string;
    try {
      resolved = await probe.config.region();
    } catch {
      throw new AwsSetupError(
        'no AWS Region: pass --region (e.g. --region us-east-1), set AWS_REGION, or give the profile a region (`aws configure`)',
      );
    }
    try {
      await withinTimeout(probe.config.credentials(), CREDENTIALS_TIMEOUT_MS);
    } catch (err) {
      const profile = process.env.AWS_PROFILE;
      throw new AwsSetupError(
        `no AWS credentials${profile ? ` for profile "${profile}"` : ''} (${(err as Error).message}): set ` +
          'AWS_PROFILE or pass --profile, run `aws configure` (or `aws sso login`), or run on an instance with a role',
      );
    }
    return resolved;
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
