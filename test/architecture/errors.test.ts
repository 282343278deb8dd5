/**
 * Errors from one small hierarchy (docs/development.md): every error class (core/, agent/, lambda/, and the
 * bundled app's config error in lib/) derives from MountfleetError (core/common/errors.ts), which carries the exit status the CLI ends with.
 * A regex over the class declarations is enough: the code declares its classes plainly.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const RUNTIME_DIRS = ['core', 'agent', 'lambda', 'lib', 'bin'];
const BASE = 'MountfleetError';

function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each declared class and what it extends, with the file it is in. */
const CLASSES = RUNTIME_DIRS.flatMap(sourceFiles).flatMap((file) =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\bclass (\w+) extends (\w+)/g)].map(
    ([, name, parent]) => ({ file, name, parent }),
  ),
);
const PARENT = new Map(CLASSES.map((c) => [c.name, c.parent]));

/** Whether `name` reaches the base through the classes declared here, or reaches Error without it. */
function derivesFromBase(name: string): boolean {
  for (let at: string | undefined = name, hops = 0; at && hops < 20; at = PARENT.get(at), hops++) {
    if (at === BASE) return true;
  }
  return false;
}

test('the runtime declares its error classes', () => {
  expect(CLASSES.some((c) => c.name === BASE && c.parent === 'Error')).toBe(true);
  expect(CLASSES.filter((c) => c.name !== BASE && derivesFromBase(c.name)).length).toBeGreaterThan(3);
});

test(`every error class of core/, agent/ and lambda/ derives from ${BASE}`, () => {
  const errors = CLASSES.filter(
    (c) => c.name !== BASE && (/Error$/.test(c.parent) || derivesFromBase(c.parent)),
  );
  expect(
    errors.filter((c) => !derivesFromBase(c.name)).map((c) => `${c.file}: ${c.name} extends ${c.parent}`),
  ).toEqual([]);
});
