import { credentialFreeEnv, emulatorEnv, expectSuccess, runCdk } from './cdk-cli';

describe('cdk-cli plumbing', () => {
  const machine = {
    PATH: '/usr/bin',
    AWS_ACCESS_KEY_ID: 'AKIAREAL',
    AWS_SECRET_ACCESS_KEY: 'real',
    AWS_PROFILE: 'prod',
    AWS_ENDPOINT_URL: 'https://example.invalid',
    CDK_DEFAULT_ACCOUNT: '123456789012',
  };

  test('the offline environment carries no credentials, profile, endpoint or default account', () => {
    const env = credentialFreeEnv(machine);
    expect(env).toEqual({
      PATH: '/usr/bin',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    });
  });

  test('the emulator environment has dummy credentials and a localhost S3 endpoint for CloudFormation', () => {
    const env = emulatorEnv('http://127.0.0.1:4567', machine);
    expect(env).toMatchObject({
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4567',
      AWS_ENDPOINT_URL_S3_FOR_CLOUDFORMATION: 'http://localhost:4567',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
    });
    expect(env.AWS_PROFILE).toBeUndefined();
  });

  test('runs the pinned CLI and reports failures with its output', async () => {
    const version = expectSuccess(await runCdk(['--version'], { env: credentialFreeEnv() }), 'cdk --version');
    expect(version.stdout).toMatch(/^2\.1148\.1 /);
    const bad = await runCdk(['no-such-command'], { env: credentialFreeEnv() });
    expect(bad.code).not.toBe(0);
    expect(() => expectSuccess(bad, 'cdk no-such-command')).toThrow(/cdk no-such-command exited with/);
  }, 60000);
});
