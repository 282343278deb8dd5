/**
 * The jsii assembly (`.jsii`, written by `npm run build`) that jsii-pacmak turns into the Python, Java, .NET
 * and Go packages: the constructs and their props are in it, typed as jsii types, documented, and zod
 * (no jsii module) travels bundled.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';
import { ASSEMBLY, ensureLibrary } from './support/library';

interface TypeRef {
  readonly fqn?: string;
  readonly primitive?: string;
}
interface Property {
  readonly name: string;
  readonly optional?: boolean;
  readonly type: TypeRef;
  readonly docs?: { readonly summary?: string; readonly default?: string };
}
interface JsiiType {
  readonly kind: 'class' | 'interface' | 'enum';
  readonly base?: string;
  /** The interfaces an interface extends (a struct's bases). */
  readonly interfaces?: string[];
  readonly datatype?: boolean;
  readonly initializer?: { readonly parameters?: { readonly name: string; readonly type: TypeRef }[] };
  readonly properties?: Property[];
}
interface Assembly {
  readonly name: string;
  readonly version: string;
  readonly targets: Record<string, Record<string, unknown>>;
  readonly dependencies?: Record<string, string>;
  readonly bundled?: Record<string, string>;
  readonly types: Record<string, JsiiType>;
}

let assembly: Assembly;

/** A struct's properties, with those of the structs of this assembly it extends (not aws-cdk-lib's StackProps). */
function allProperties(fqn: string): Property[] {
  const type = assembly.types[fqn];
  if (!type) return [];
  return [...(type.interfaces ?? []).flatMap(allProperties), ...(type.properties ?? [])];
}

beforeAll(() => {
  ensureLibrary();
  assembly = JSON.parse(readFileSync(ASSEMBLY, 'utf8')) as Assembly;
}, 120000);

test('the assembly is this package, with a Python target, and zod bundled rather than a dependency', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(assembly.name).toBe('mountfleet');
  expect(assembly.version).toBe(pkg.version);
  expect(Object.keys(assembly.targets).sort()).toEqual(['dotnet', 'go', 'java', 'js', 'python']);
  expect(assembly.targets['python']).toEqual({ distName: 'mountfleet', module: 'mountfleet' });
  expect(Object.keys(assembly.dependencies ?? {}).sort()).toEqual(['aws-cdk-lib', 'constructs']);
  expect(Object.keys(assembly.bundled ?? {})).toEqual(['zod']);
});

test.each([
  ['FleetNetwork', 'constructs.Construct', ['azIds']],
  ['ExpressCache', 'aws-cdk-lib.Resource', ['azIds']],
  ['ScratchFileSystems', 'constructs.Construct', ['fleetId', 'network']],
  ['ComputeFleet', 'constructs.Construct', ['fleetId', 'network']],
  ['OrphanReaper', 'constructs.Construct', ['fleetId']],
  ['StorageDashboard', 'constructs.Construct', ['fleetId']],
  ['MountfleetStack', 'aws-cdk-lib.Stack', ['config']],
])('%s is a construct taking its props struct with the required fields', (name, base, required) => {
  const type = assembly.types[`mountfleet.${name}`];
  expect(type).toMatchObject({ kind: 'class', base });
  expect(type!.initializer!.parameters!.map((p) => [p.name, p.type])).toEqual([
    ['scope', { fqn: 'constructs.Construct' }],
    ['id', { primitive: 'string' }],
    ['props', { fqn: `mountfleet.${name}Props` }],
  ]);
  const props = assembly.types[`mountfleet.${name}Props`]!;
  expect(props).toMatchObject({ kind: 'interface', datatype: true });
  const requiredHere = allProperties(`mountfleet.${name}Props`)
    .filter((p) => !p.optional)
    .map((p) => p.name);
  expect(requiredHere).toEqual(expect.arrayContaining(required));
});

test.each(['ComputeFleetProps', 'BatchComputeFleetProps'])(
  '%s extends FleetInstancesProps and declares none of its props again',
  (name) => {
    const type = assembly.types[`mountfleet.${name}`]!;
    expect(type.interfaces).toEqual(['mountfleet.FleetInstancesProps']);
    const shared = (assembly.types['mountfleet.FleetInstancesProps']!.properties ?? []).map((p) => p.name);
    expect(shared).toEqual(
      expect.arrayContaining(['fleetId', 'network', 'mounts', 'scratch', 'machineImage']),
    );
    const own = (type.properties ?? []).map((p) => p.name);
    expect(own.filter((p) => shared.includes(p))).toEqual([]);
  },
);

test('every field of every struct has a summary, and every optional one its @default', () => {
  const missing = Object.entries(assembly.types)
    .filter(([, t]) => t.datatype)
    .flatMap(([fqn, t]) =>
      (t.properties ?? []).flatMap((p) => [
        ...(p.docs?.summary ? [] : [`${fqn}.${p.name}: no summary`]),
        ...(p.optional && p.docs?.default === undefined ? [`${fqn}.${p.name}: no @default`] : []),
      ]),
    );
  expect(missing).toEqual([]);
});

test('the bundled app config and the scratch agent settings are structs, not TypeScript-only types', () => {
  const network = assembly.types['mountfleet.ResolvedStackConfig']!.properties!.find(
    (p) => p.name === 'network',
  );
  expect(network!.type).toEqual({
    union: {
      types: [{ fqn: 'mountfleet.FleetNetworkAttributes' }, { fqn: 'mountfleet.StackNewNetworkConfig' }],
    },
  });
  expect(assembly.types['mountfleet.ScratchAgentSettings']).toMatchObject({
    kind: 'interface',
    datatype: true,
  });
});
