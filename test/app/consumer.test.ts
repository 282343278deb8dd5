/**
 * The consumer example compiled and run against the packed package, as a user would get it: `npm pack`,
 * extracted into a temporary project's node_modules/mountfleet, with aws-cdk-lib and constructs (the peer
 * dependencies) linked from this repository; zod ships inside the package (bundleDependencies, for jsii).
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

test('examples/consumer-app type-checks and synthesizes against the packed mountfleet', () => {
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

  copyFileSync(join(REPO_ROOT, 'examples', 'consumer-app', 'app.ts'), join(project, 'app.ts'));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'commonjs',
        moduleResolution: 'node',
        strict: true,
        outDir: 'out',
        skipLibCheck: true,
        types: [],
        lib: ['ES2022'],
      },
      files: ['app.ts'],
    }),
  );
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  // One strict compile: any type error against mountfleet's declarations fails it (tsc exits non-zero).
  run(process.execPath, [tsc, '-p', 'tsconfig.json'], project);

  const cdkOut = join(project, 'cdk.out');
  run(process.execPath, [join(project, 'out', 'app.js')], project, {
    ...process.env,
    CDK_OUTDIR: cdkOut,
    CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }),
  });
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
