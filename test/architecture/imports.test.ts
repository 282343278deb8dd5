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
 * The core/ folders a construct may import: the contract shared by the constructs and the code they deploy
 * (agent.json schema, tags, metric names, path rules, reaper settings, agent paths, where the bundles are),
 * and the pure tuner (MountpointCsiVolumes renders at synth what `tune --csi` prints, by the same rules).
 * Everything else in core/ is runtime code that belongs on the instance or in the Lambda, not in a CDK app.
 */
const LIB_MAY_IMPORT_FROM_CORE = new Set(['core/contract/index.ts', 'core/tuner/index.ts']);

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

/** `core/<folder>` for a file in a folder of core/, undefined for anything else. */
function coreFolder(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'core' && parts.length > 2 ? `core/${parts[1]}` : undefined;
}

/** Cycles between core/ folders (a folder importing another, which imports it back, directly or not). */
function folderCycles(): string[] {
  const next = new Map<string, Set<string>>();
  for (const e of EDGES) {
    const [from, to] = [coreFolder(e.from), coreFolder(e.to)];
    if (e.external || !from || !to || from === to) continue;
    next.set(from, (next.get(from) ?? new Set()).add(to));
  }
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (folder: string) => {
    state.set(folder, 'open');
    stack.push(folder);
    for (const to of next.get(folder) ?? []) {
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to].join(' -> '));
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(folder, 'done');
  };
  for (const folder of next.keys()) if (!state.has(folder)) visit(folder);
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

  test('lib/ imports from core/ only the contract and the tuner, through their index.ts', () => {
    expect(
      violations(
        under('lib'),
        (e) => !e.external && under('core')(e.to) && !LIB_MAY_IMPORT_FROM_CORE.has(e.to),
      ),
    ).toEqual([]);
  });

  test('a core/ folder is entered through its index.ts: from outside it, nothing else of it is imported', () => {
    expect(
      violations(
        (f) => SOURCE_DIRS.some((d) => under(d)(f)),
        (e) =>
          !e.external &&
          coreFolder(e.to) !== undefined &&
          coreFolder(e.to) !== coreFolder(e.from) &&
          !e.to.endsWith('/index.ts'),
      ),
    ).toEqual([]);
  });

  test('no cycle between core/ folders', () => {
    expect(folderCycles()).toEqual([]);
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

  test('core/scratch does not import the on-instance agent (core/agent), which waits for scratch runs', () => {
    expect(violations(under('core/scratch'), (e) => under('core/agent')(e.to))).toEqual([]);
  });

  // What a Batch run shares with a run on an instance has an owner of its own: the burst credit (core/credit),
  // the run's file system (core/efs) and its names (core/contract). The submit and teardown Lambdas stay small.
  test('core/batch does not import the run on an instance (core/scratch)', () => {
    expect(violations(under('core/batch'), (e) => under('core/scratch')(e.to))).toEqual([]);
  });

  test('the Lambda bundle pulls in no agent-only module', () => {
    const handlers = FILES.filter(under('lambda'));
    const pulled = handlers.flatMap((h) => [...closure(h)]).filter(under('agent'));
    expect(pulled).toEqual([]);
  });
});
