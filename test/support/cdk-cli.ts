/**
 * The real CDK CLI (node_modules/.bin/cdk, aws-cdk 2.1148.1) run the way the tests and the sandbox demo
 * need it: offline with no credentials at all (synth), or against a moto server with dummy credentials
 * (bootstrap, deploy, destroy). Telemetry is always off.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './moto';

export const CDK_BIN = join(REPO_ROOT, 'node_modules', '.bin', 'cdk');
/** moto's fixed account id: `cdk bootstrap aws://123456789012/us-east-1`. */
export const EMULATOR_ACCOUNT = '123456789012';
export const EMULATOR_REGION = 'us-east-1';

export interface CdkResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The process environment without any AWS credentials, profile, endpoint or region source. */
export function credentialFreeEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (/^AWS_/.test(k) || /^CDK_DEFAULT_/.test(k)) continue;
    env[k] = v;
  }
  return {
    ...env,
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    AWS_EC2_METADATA_DISABLED: 'true',
    // Point the shared config files at nothing, so no profile on the machine can supply credentials.
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
  };
}

/**
 * Environment for the CLI against a moto server at `endpoint` (http://127.0.0.1:PORT). CloudFormation in
 * moto fetches templates from S3 by URL and only parses path-style URLs on `localhost`, hence the
 * separate S3 endpoint for it.
 */
export function emulatorEnv(endpoint: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const port = new URL(endpoint).port;
  return {
    ...credentialFreeEnv(base),
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_SESSION_TOKEN: 'testing',
    AWS_REGION: EMULATOR_REGION,
    AWS_DEFAULT_REGION: EMULATOR_REGION,
    AWS_ENDPOINT_URL: endpoint,
    AWS_ENDPOINT_URL_S3_FOR_CLOUDFORMATION: `http://localhost:${port}`,
  };
}

/** Runs `cdk ARGS` in `cwd` (default: the repository, whose cdk.json names the bundled app). */
export function runCdk(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number },
): Promise<CdkResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(CDK_BIN, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/** Throws with the CLI's output when it failed. */
export function expectSuccess(result: CdkResult, what: string): CdkResult {
  if (result.code !== 0) {
    throw new Error(
      `${what} exited with ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr.slice(-6000)}`,
    );
  }
  return result;
}
