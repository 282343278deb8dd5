/**
 * The consumer example (examples/consumer-app: app.ts, cdk.json, tsconfig.json, package.json) type-checked
 * and synthesized by the CDK CLI against the packed package, as a user would get it: `npm pack`, extracted
 * into a temporary copy of the project's node_modules/mountfleet, with aws-cdk-lib and constructs (the peer
 * dependencies) and aws-cdk, tsx and typescript (its dev dependencies) linked from this repository; zod ships
 * inside the package (bundleDependencies, for jsii).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialFreeEnv, expectSuccess, runCdk } from '../support/cdk-cli';
import { REPO_ROOT } from '../support/moto';
import { ensureBundles } from '../lib/support';
import { ensureLibrary } from './support/library';

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`, { cause: e });
  }
}

test('examples/consumer-app, as shipped, type-checks and synthesizes with the CDK CLI against the packed mountfleet', async () => {
  ensureBundles();
  ensureLibrary();
  const project = mkdtempSync(join(tmpdir(), 'mf-consumer-'));
  const tarball = run('npm', ['pack', '--silent', '--pack-destination', project], REPO_ROOT)
    .trim()
    .split('\n')
    .pop()!;
  const pkg = join(project, 'node_modules', 'mountfleet');
  mkdirSync(pkg, { recursive: true });
  run('tar', ['-xzf', join(project, tarball), '-C', pkg, '--strip-components=1'], project);
  for (const dep of ['aws-cdk-lib', 'constructs']) {
    symlinkSync(join(REPO_ROOT, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
  }
  expect(readdirSync(join(pkg, 'dist')).sort()).toEqual(['agent', 'core', 'lambda', 'lib']);

  // The example project as shipped: its app, cdk.json, tsconfig.json and package.json.
  for (const file of ['app.ts', 'cdk.json', 'tsconfig.json', 'package.json']) {
    copyFileSync(join(REPO_ROOT, 'examples', 'consumer-app', file), join(project, file));
  }
  // Its dev dependencies, as `npm install` would put them (from this repository, offline).
  for (const dep of ['aws-cdk', 'tsx', 'typescript']) {
    symlinkSync(join(REPO_ROOT, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
  }
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  // One strict compile with the shipped tsconfig.json: any type error against mountfleet's declarations fails it.
  run(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.json'], project);

  // `npx cdk synth` in the project: the real CDK CLI runs the app through the shipped cdk.json.
  const synth = await runCdk(['synth', '--no-lookups', '--quiet'], {
    env: credentialFreeEnv(),
    cwd: project,
  });
  expectSuccess(synth, 'cdk synth of examples/consumer-app');
  const cdkOut = join(project, 'cdk.out');
  const template = JSON.parse(readFileSync(join(cdkOut, 'TrainingFleet.template.json'), 'utf8')) as {
    Resources: Record<string, { Type: string }>;
  };
  const types = Object.values(template.Resources).map((r) => r.Type);
  expect(types).toEqual(
    expect.arrayContaining([
      'AWS::S3Express::DirectoryBucket',
      'AWS::AutoScaling::AutoScalingGroup',
      'AWS::Lambda::Function',
    ]),
  );
  // The assets come from the installed package, not from this checkout.
  const assets = readFileSync(join(cdkOut, 'TrainingFleet.assets.json'), 'utf8');
  expect(assets).toContain('"packaging": "zip"');
}, 120000);
