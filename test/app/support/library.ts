/** Builds the library (dist/lib, dist/core and the .jsii assembly) with jsii, as `npm run build` does. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/moto';

/** The jsii assembly `npm run build` writes at the package root. */
export const ASSEMBLY = join(REPO_ROOT, '.jsii');

/** True when the assembly or dist/lib is missing or older than any source file of lib/ or core/. */
function libraryIsStale(): boolean {
  const outputs = [ASSEMBLY, join(REPO_ROOT, 'dist', 'lib', 'index.js')];
  if (!outputs.every(existsSync)) return true;
  const builtAt = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  const sources = ['lib', 'core'].flatMap((dir) =>
    readdirSync(join(REPO_ROOT, dir), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(REPO_ROOT, dir, f)),
  );
  return [join(REPO_ROOT, 'package.json'), ...sources].some((f) => statSync(f).mtimeMs > builtAt);
}

/** The full build compiles the library with jsii; redo it here only when stale (~25 s). */
export function ensureLibrary(): void {
  if (!libraryIsStale()) return;
  try {
    execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'jsii', 'bin', 'jsii')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`jsii failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`, { cause: e });
  }
}
