/**
 * What Construct Hub would publish for Python: `jsii-pacmak --code-only --targets python` turns the assembly
 * into a Python package source (no wheel: that needs pip and the network), which must be valid Python with
 * the constructs, snake_case props and the CDK dependencies. ~15 s.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';
import { ensureLibrary } from './support/library';

let out: string;
beforeAll(() => {
  ensureLibrary();
  out = mkdtempSync(join(tmpdir(), 'mf-pacmak-'));
  execFileSync(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules', 'jsii-pacmak', 'bin', 'jsii-pacmak'),
      '--code-only',
      '--targets',
      'python',
      '--outdir',
      out,
    ],
    { cwd: REPO_ROOT, stdio: 'pipe' },
  );
}, 120000);

test('the generated module is valid Python with the constructs and their props', () => {
  const module = join(out, 'python', 'src', 'mountfleet', '__init__.py');
  execFileSync('python3', ['-m', 'py_compile', module], { stdio: 'pipe' });
  const source = readFileSync(module, 'utf8');
  for (const name of ['FleetNetwork', 'ExpressCache', 'ScratchFileSystems', 'ComputeFleet', 'OrphanReaper']) {
    expect(source).toMatch(new RegExp(`^class ${name}\\(`, 'm'));
    expect(source).toMatch(new RegExp(`^class ${name}Props:`, 'm'));
  }
  expect(source).toContain('fleet_id: builtins.str');
});

test('the package depends on the CDK and jsii, not on zod (it is bundled)', () => {
  const setup = readFileSync(join(out, 'python', 'setup.py'), 'utf8');
  expect(setup).toMatch(/"aws-cdk-lib>=2\.276\.0, <3\.0\.0"/);
  expect(setup).toMatch(/"constructs>=10\.0\.0, <11\.0\.0"/);
  expect(setup).toMatch(/"jsii>=/);
  expect(setup).not.toMatch(/zod/);
});
