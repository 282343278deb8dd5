import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root';

/** The package version: inlined by the bundler (scripts/bundle.mjs), else read from package.json. */
export const VERSION: string =
  process.env.MOUNTFLEET_VERSION ??
  (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
