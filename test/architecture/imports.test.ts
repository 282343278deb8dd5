/**
 * The layering docs/architecture.md describes ("the arrows only point down"), checked on the import
 * statements of every source file. A regex over the module specifiers is enough: the code base has no
 * computed imports, and a missed edge could only hide a violation, never invent one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SOURCE_DIRS = ['agent', 'core', 'lib', 'lambda', 'bin'];

/**
 * The only core/ modules a construct may import: the contract shared by the constructs and the
 * code they deploy. Anything else in core/ is runtime code that belongs on the instance or in the
 * Lambda, not in a CDK app.
 */
const LIB_MAY_IMPORT_FROM_CORE = new Set([
  'core/contract/agent-config.ts', // agent.json schema, defaults and limits that ComputeFleet writes
  'core/contract/tags.ts', // tag keys the fleet's IAM conditions and the reaper key on
  'core/contract/mount-path-rules.ts', // mount path and prefix rules, checked at synth and on agent start
  'core/contract/metric-names.ts', // metric namespace and dimensions the agent emits and the dashboard reads
  'core/contract/reaper-settings.ts', // reaper setting ranges, validated at synth and by the handler
  'core/contract/agent-paths.ts', // on-instance paths the user data refers to
  'core/tuner/instance-facts.ts', // instance facts the CSI volumes are tuned from
  // The CSI PV/PVC renderer: MountpointCsiVolumes renders at synth what `tune --csi` prints, tuned
  // by the agent's own rules, so both must run the same code (it is pure: no AWS SDK, no I/O).
  'core/tuner/csi-volumes.ts',
  'core/contract/package-root.ts', // where the pre-built agent and Lambda bundles live
]);

/** One edge of the graph: `from` imports `spec`, resolved to a repo-relative file or a package. */
interface Edge {
  readonly from: string;
  readonly to: string;
  readonly external: boolean;
}

function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const SPECIFIER = /(?:\bfrom|\bimport|\brequire\()\s*\(?\s*['"]([^'"]+)['"]/g;

function resolveLocal(from: string, spec: string): string {
  const base = resolve(ROOT, dirname(from), spec);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(ROOT, candidate);
  }
  throw new Error(`${from}: cannot resolve import '${spec}'`);
}

function edgesOf(file: string): Edge[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(SPECIFIER)].map(([, spec]) =>
    spec.startsWith('.')
      ? { from: file, to: resolveLocal(file, spec), external: false }
      : { from: file, to: spec.replace(/^node:/, ''), external: true },
  );
}

const FILES = SOURCE_DIRS.flatMap(sourceFiles).sort();
const EDGES = FILES.flatMap(edgesOf);
const LOCAL = new Map<string, string[]>(FILES.map((f) => [f, []]));
for (const e of EDGES) if (!e.external) LOCAL.get(e.from)?.push(e.to);

const under = (dir: string) => (file: string) => file.startsWith(`${dir}/`);
const packageName = (spec: string) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];

function violations(fromFilter: (f: string) => boolean, bad: (e: Edge) => boolean): string[] {
  return EDGES.filter((e) => fromFilter(e.from) && bad(e)).map((e) => `${e.from} -> ${e.to}`);
}

/** Every cycle's first closing path found by a depth-first walk, as `a -> b -> a`. */
function cycles(): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of LOCAL.get(node) ?? []) {
      if (state.get(next) === 'open') {
        found.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      } else if (!state.has(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const file of FILES) if (!state.has(file)) visit(file);
  return found;
}

/** Files reachable from `start` over local imports. */
function closure(start: string): Set<string> {
  const seen = new Set<string>();
  const walk = (node: string) => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const next of LOCAL.get(node) ?? []) walk(next);
  };
  walk(start);
  return seen;
}

describe('import graph', () => {
  test('parses the source tree', () => {
    expect(FILES.length).toBeGreaterThan(50);
    expect(EDGES.length).toBeGreaterThan(FILES.length);
  });

  // Type-only imports count too: two modules whose types need each other cannot be understood apart.
  test('has no cycles', () => {
    expect(cycles()).toEqual([]);
  });

  test('core/ imports neither lib/ agent/ lambda/ bin/ nor aws-cdk-lib', () => {
    const upward = ['lib', 'agent', 'lambda', 'bin'].map(under);
    expect(
      violations(under('core'), (e) =>
        e.external
          ? ['aws-cdk-lib', 'constructs', 'cdk-nag'].includes(packageName(e.to))
          : upward.some((isUnder) => isUnder(e.to)),
      ),
    ).toEqual([]);
  });

  test('the agent and the Lambda import neither lib/, bin/ nor aws-cdk-lib', () => {
    const runtime = (f: string) => under('agent')(f) || under('lambda')(f);
    expect(
      violations(runtime, (e) =>
        e.external
          ? ['aws-cdk-lib', 'constructs', 'cdk-nag'].includes(packageName(e.to))
          : under('lib')(e.to) || under('bin')(e.to),
      ),
    ).toEqual([]);
  });

  test('lib/ imports from core/ only the shared contract', () => {
    expect(
      violations(
        under('lib'),
        (e) => !e.external && under('core')(e.to) && !LIB_MAY_IMPORT_FROM_CORE.has(e.to),
      ),
    ).toEqual([]);
  });

  test('what lib/ loads needs only the package dependencies (no AWS SDK in a CDK app)', () => {
    const { dependencies = {}, peerDependencies = {} } = JSON.parse(
      readFileSync(join(ROOT, 'package.json'), 'utf8'),
    ) as Record<string, Record<string, string> | undefined>;
    const allowed = new Set([...Object.keys(dependencies), ...Object.keys(peerDependencies)]);
    const loaded = closure('lib/index.ts');
    expect(
      violations(
        (f) => loaded.has(f),
        (e) => e.external && !isBuiltin(e.to) && !allowed.has(packageName(e.to)),
      ),
    ).toEqual([]);
  });

  // The constructs plan (the tuner, the cache-volume plan) but never prepare disks or run programs at synth.
  test('what lib/ loads starts no process', () => {
    const loaded = closure('lib/index.ts');
    expect(
      violations(
        (f) => loaded.has(f),
        (e) => e.external && e.to === 'child_process',
      ),
    ).toEqual([]);
  });

  test('lib/ imports neither agent/ nor lambda/ (it loads their pre-built bundles)', () => {
    expect(
      violations(under('lib'), (e) => !e.external && (under('agent')(e.to) || under('lambda')(e.to))),
    ).toEqual([]);
  });

  test('bin/ composes constructs: it imports lib/ only, never core/ or agent/', () => {
    expect(violations(under('bin'), (e) => !e.external && !under('lib')(e.to))).toEqual([]);
  });

  test('commands never import agent/cli.ts', () => {
    expect(violations(under('agent/commands'), (e) => e.to === 'agent/cli.ts')).toEqual([]);
  });

  test('core/scratch and core/mountpoint do not import each other', () => {
    expect([
      ...violations(under('core/scratch'), (e) => under('core/mountpoint')(e.to)),
      ...violations(under('core/mountpoint'), (e) => under('core/scratch')(e.to)),
    ]).toEqual([]);
  });

  test('the Lambda bundle pulls in no agent-only module', () => {
    const handlers = FILES.filter(under('lambda'));
    const pulled = handlers.flatMap((h) => [...closure(h)]).filter(under('agent'));
    expect(pulled).toEqual([]);
  });
});
