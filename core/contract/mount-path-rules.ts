/**
 * The rules for the mount paths and S3 prefixes a user gives (agent.json, the app config, construct props,
 * `--path`), in one place so the CLI, the agent's schema and the constructs agree. Checked by walking
 * the string once: a backtracking regular expression on a path such as `/a/a/a/…/!` takes seconds.
 */

import { withoutTrailingSlash } from '../common';

/** Linux PATH_MAX (4096 bytes with the terminating NUL) and NAME_MAX. */
const MAX_PATH_LENGTH = 4095;
const MAX_SEGMENT_LENGTH = 255;

/**
 * Directories that hold the operating system: a mount on them or anywhere below them hides files the
 * instance needs to run (or, for /proc, /sys and /dev, is not a place a file system can go).
 */
export const SYSTEM_TREES: readonly string[] = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/sbin',
  '/sys',
  '/usr',
];

/**
 * Directories that are refused themselves (a mount there hides everything in them) but whose
 * subdirectories are ordinary mount points (`/mnt/data`, `/var/lib/training`, `/opt/datasets`).
 */
export const SYSTEM_DIRECTORIES: readonly string[] = [
  '/',
  '/home',
  '/media',
  '/mnt',
  '/opt',
  '/root',
  '/run',
  '/srv',
  '/tmp',
  '/var',
];

/** True for the C0 control characters and DEL: a newline in a path breaks the systemd units it goes into. */
function isControlCharacter(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

/**
 * What is wrong with a mount path, or undefined when it is fine: absolute, at most 4095 characters, no
 * empty (`//`), `.` or `..` segments, no control characters, and not a system directory (see
 * SYSTEM_TREES and SYSTEM_DIRECTORIES). One trailing `/` is allowed.
 */
export function checkMountPath(path: string): string | undefined {
  if (typeof path !== 'string' || path === '') return 'must be an absolute path such as /mnt/data';
  if (path.length > MAX_PATH_LENGTH) return `must be at most ${MAX_PATH_LENGTH} characters long`;
  if (!path.startsWith('/')) return `must be an absolute path such as /mnt/data, not "${printable(path)}"`;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (isControlCharacter(code)) {
      return `must not contain control characters (found U+${code.toString(16).padStart(4, '0').toUpperCase()} at position ${i})`;
    }
  }
  const trimmed = withoutTrailingSlash(path);
  const segments = trimmed === '/' ? [] : trimmed.slice(1).split('/');
  for (const segment of segments) {
    if (segment === '') return `must not contain empty segments ("//"): "${printable(path)}"`;
    if (segment === '.' || segment === '..') {
      return `must not contain "." or ".." segments (give the path they resolve to): "${printable(path)}"`;
    }
    if (segment.length > MAX_SEGMENT_LENGTH) {
      return `has a segment longer than ${MAX_SEGMENT_LENGTH} characters`;
    }
  }
  if (SYSTEM_DIRECTORIES.includes(trimmed)) {
    return `"${trimmed}" is a system directory: mount in a directory of its own such as /mnt/data`;
  }
  const tree = SYSTEM_TREES.find((t) => trimmed === t || trimmed.startsWith(`${t}/`));
  if (tree) {
    return `"${trimmed}" is in the system directory ${tree}: mount in a directory of its own such as /mnt/data`;
  }
  return undefined;
}

/**
 * What is wrong with an S3 key prefix to mount, or undefined: empty (the whole bucket) or ending in `/`,
 * not starting with `/`, without control characters, and without `*` or `?` — the instance role's grant
 * is `arn:…:bucket/<prefix>*`, where they would be IAM wildcards reaching other prefixes.
 */
export function checkMountPrefix(prefix: string): string | undefined {
  if (typeof prefix !== 'string') return 'must be a string such as "datasets/imagenet/"';
  if (prefix === '') return undefined;
  if (prefix.length > 1024) return 'must be at most 1024 characters long (the S3 key limit)';
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix[i];
    if (c === '*' || c === '?') {
      return `must not contain "*" or "?" (they would be wildcards in the IAM grant on the bucket): name the prefix itself, e.g. "datasets/imagenet/", not "${printable(prefix)}"`;
    }
    if (isControlCharacter(prefix.charCodeAt(i))) return 'must not contain control characters';
  }
  if (prefix.startsWith('/') || !prefix.endsWith('/')) {
    return `must be empty or end in "/" and not start with "/" (for example "datasets/imagenet/"), not "${printable(prefix)}"`;
  }
  return undefined;
}

/** The value as it can be shown in one line of an error: control characters escaped, long ones cut. */
function printable(text: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return JSON.stringify(shown).slice(1, -1);
}
