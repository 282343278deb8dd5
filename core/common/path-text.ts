/** Path strings as users write them. */

/** The path without one trailing `/` (`/mnt/data/` → `/mnt/data`); `/` stays `/`. */
export function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
