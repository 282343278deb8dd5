/**
 * What Construct Hub would publish: `jsii-pacmak --code-only` turns the assembly into the package sources of
 * every target package.json configures (Python, Java, Go, .NET). Each is checked as far as this machine can
 * without the network: Python compiles (py_compile), Go and Java parse (gofmt, javac stopped after parsing:
 * compiling them needs aws-cdk-lib's Go module and Maven jars), .NET (no SDK here) by its generated names.
 * Compiling each package for real: scripts/jsii-targets.sh. ~15 s.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';
import { ensureLibrary } from './support/library';

const CONSTRUCTS = ['FleetNetwork', 'ExpressCache', 'ScratchFileSystems', 'ComputeFleet', 'OrphanReaper'];
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
/** A check that needs a tool: skipped where the machine lacks it, the skipped test's name saying so. */
const withTool =
  (tool: string) =>
  (name: string, check: () => void): void =>
    has(tool) ? test(name, check) : test.skip(`${name} (skipped: ${tool} is not installed)`, check);

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
      'python,java,go,dotnet',
      '--outdir',
      out,
    ],
    { cwd: REPO_ROOT, stdio: 'pipe' },
  );
}, 120000);

const filesUnder = (dir: string, suffix: string) =>
  readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(suffix))
    .map((f) => join(dir, f));

describe('Python', () => {
  test('the generated module is valid Python with the constructs and their props', () => {
    const module = join(out, 'python', 'src', 'mountfleet', '__init__.py');
    execFileSync('python3', ['-m', 'py_compile', module], { stdio: 'pipe' });
    const source = readFileSync(module, 'utf8');
    for (const name of CONSTRUCTS) {
      expect(source).toMatch(new RegExp(`^class ${name}\\(`, 'm'));
      // A fleet's props extend the instances' props (FleetInstancesProps), a Python base class.
      expect(source).toMatch(new RegExp(`^class ${name}Props(\\(FleetInstancesProps\\))?:`, 'm'));
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
});

describe('Go', () => {
  withTool('gofmt')('every generated file parses, and the module requires the CDK for Go', () => {
    const dir = join(out, 'go', 'mountfleet');
    const files = filesUnder(dir, '.go');
    expect(files.length).toBeGreaterThan(10);
    // -l lists files whose formatting differs; -e reports every syntax error. Parsing is the point here.
    const r = spawnSync('gofmt', ['-e', '-l', ...files], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const source = readFileSync(join(dir, 'ComputeFleet.go'), 'utf8');
    expect(source).toMatch(
      /^func NewComputeFleet\(scope constructs\.Construct, id \*string, props \*ComputeFleetProps\) ComputeFleet/m,
    );
    const goMod = readFileSync(join(dir, 'go.mod'), 'utf8');
    expect(goMod).toMatch(/^module github\.com\/mountfleet\/mountfleet-go\/mountfleet$/m);
    expect(goMod).toMatch(/github\.com\/aws\/aws-cdk-go\/awscdk\/v2 v2\.276\.0/);
  });
});

describe('Java', () => {
  withTool('javac')('every generated source parses', () => {
    const sources = filesUnder(join(out, 'java', 'src', 'main', 'java'), '.java');
    expect(sources.map((f) => f.split('/').pop())).toEqual(
      expect.arrayContaining(CONSTRUCTS.map((c) => `${c}.java`)),
    );
    // javac's own parser, stopped before it resolves types (aws-cdk-lib's jars are not here).
    const r = spawnSync(
      'javac',
      [
        '-XDshould-stop.ifNoError=PARSE',
        '-XDshould-stop.ifError=PARSE',
        '-d',
        join(out, 'classes'),
        ...sources,
      ],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const pom = readFileSync(join(out, 'java', 'pom.xml'), 'utf8');
    expect(pom).toContain('<groupId>io.github.mountfleet</groupId>');
    expect(pom).toMatch(/<artifactId>aws-cdk-lib<\/artifactId>\s*<version>\[2\.276\.0,3\.0\.0\)<\/version>/);
  });
});

describe('.NET', () => {
  test("jsii's reserved-word notice about `namespace` is harmless: C# gets a `Namespace` property", () => {
    const props = readFileSync(
      join(out, 'dotnet', 'Mountfleet', 'Mountfleet', 'MountpointCsiVolumesProps.cs'),
      'utf8',
    );
    expect(props).toMatch(/public string\? Namespace\b/);
    expect(readdirSync(join(out, 'dotnet', 'Mountfleet', 'Mountfleet'))).toEqual(
      expect.arrayContaining(CONSTRUCTS.map((c) => `${c}.cs`)),
    );
  });
});
