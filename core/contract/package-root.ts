import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The directory holding mountfleet's package.json, found by walking up from this file. Works from the
 * TypeScript sources (core/), the compiled library (dist/core/) and an installed package alike.
 */
export function packageRoot(from: string = __dirname): string {
  let dir = from;
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (
      existsSync(candidate) &&
      (JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === 'mountfleet'
    ) {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find mountfleet's package.json above ${from}`);
    dir = parent;
  }
}
