/**
 * The bundled app through the real CDK CLI: `cdk synth --no-lookups` offline with no credentials at all,
 * with and without an Express cache, then cfn-lint (errors and warnings) on every synthesized template.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialFreeEnv, expectSuccess, runCdk } from '../support/cdk-cli';
import { REPO_ROOT } from '../support/moto';
import { ensureBundles } from '../lib/support';

const CFN_LINT = join(REPO_ROOT, '.venv', 'bin', 'cfn-lint');

beforeAll(ensureBundles);

function templatesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.template.json'))
    .map((f) => join(dir, f));
}

function resourceTypes(template: string): string[] {
  const t = JSON.parse(readFileSync(template, 'utf8')) as { Resources: Record<string, { Type: string }> };
  return Object.values(t.Resources).map((r) => r.Type);
}

const CASES: Array<[name: string, args: string[], stacks: string[], withExpress: boolean]> = [
  ['zero config', [], ['Mountfleet'], true],
  ['sandbox profile', ['-c', 'mountfleetConfig=examples/sandbox.config.json'], ['Mountfleet'], true],
  [
    'example config',
    ['-c', 'mountfleetConfig=examples/mountfleet.config.json'],
    ['Mountfleet-dev', 'Mountfleet-prod'],
    true,
  ],
];
const outDirs = new Map<string, string>();

beforeAll(async () => {
  for (const [name, args] of CASES) {
    const out = mkdtempSync(join(tmpdir(), 'mf-synth-'));
    expectSuccess(
      await runCdk(['synth', '--no-lookups', '--quiet', '-o', out, ...args], { env: credentialFreeEnv() }),
      `cdk synth (${name})`,
    );
    outDirs.set(name, out);
  }
}, 180000);

test.each(CASES)(
  'cdk synth --no-lookups, %s: offline, no credentials, the expected stacks',
  (name, _args, stacks, withExpress) => {
    const out = outDirs.get(name)!;
    expect(templatesIn(out).map((t) => t.replace(/^.*\/|\.template\.json$/g, ''))).toEqual(stacks);
    for (const t of templatesIn(out)) {
      const types = resourceTypes(t);
      expect(types.includes('AWS::S3Express::DirectoryBucket')).toBe(withExpress);
      expect(types).toContain('AWS::Lambda::Function');
      expect(types).toContain('AWS::AutoScaling::AutoScalingGroup');
    }
  },
);

test('cfn-lint reports no error and no warning on any synthesized template', () => {
  const templates = [...outDirs.values()].flatMap(templatesIn);
  expect(templates).toHaveLength(4);
  let output = '';
  try {
    execFileSync(CFN_LINT, ['--format', 'parseable', ...templates], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; status?: number };
    output = `exit ${err.status}\n${err.stdout ?? ''}${err.stderr ?? ''}`;
  }
  expect(output).toBe('');
}, 60000);
