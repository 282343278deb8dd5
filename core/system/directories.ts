/** Creating directories with an error that names the real cause. */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p`: returns the first directory it created (undefined when all existed). On failure it throws
 * the error of the first level that could not be made: Node's recursive mkdir reports ENOENT for a path
 * below a read-only mount, where the cause is EROFS (or EACCES, ENOSPC).
 */
export function makeDirectories(path: string, mode?: number): string | undefined {
  try {
    return mkdirSync(path, { recursive: true, mode });
  } catch (err) {
    let missing = path;
    while (!existsSync(dirname(missing)) && dirname(missing) !== missing) missing = dirname(missing);
    mkdirSync(missing, { mode }); // throws the real cause
    throw err;
  }
}
