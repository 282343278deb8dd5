/**
 * Paths only root can change: every parent root's and closed to others (or sticky with the next component
 * root's), no symlink once resolved; a held directory says when the path no longer names it; configured
 * paths may go through symlinks only where nobody else can re-point them. Real directories, owners and modes
 * (the tests run as root).
 */
import { MountfleetError } from '../../../core/common/errors';
import {
  chmodSync,
  chownSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  holdCheckedDirectory,
  untrustedConfiguredPathProblem,
  untrustedPathProblem,
  untrustedPathProblemBeforeCreating,
} from '../../../core/system/trusted-path';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-trusted-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const made = (...parts: string[]) => {
  const path = join(dir, ...parts);
  mkdirSync(path, { recursive: true });
  return path;
};

test("a path whose parents are all root's and closed to others is trusted; its leaf may be anyone's", () => {
  const leaf = made('a', 'scratch');
  chownSync(leaf, 1000, 1000);
  expect(untrustedPathProblem(leaf)).toBeUndefined();
  expect(untrustedPathProblem(leaf, { asParent: true })).toBe(
    `${leaf} belongs to uid 1000: that user can replace what is below it with a symlink (to /etc, say) before ` +
      'mountfleet uses it; use a path whose parent directories only root can change, such as /mnt/scratch',
  );
});

test('a parent another user owns, or may write to, is named with the fix', () => {
  const user = made('user');
  chownSync(user, 1000, 1000);
  expect(untrustedPathProblem(made('user', 'x'))).toMatch(new RegExp(`^${user} belongs to uid 1000: `));
  const open = made('open');
  chmodSync(open, 0o775);
  expect(untrustedPathProblem(made('open', 'x'))).toBe(
    `${open} is writable by other users (mode 0775): they can replace what is below it with a symlink before ` +
      `mountfleet uses it; use a path whose parent directories only root can change (or chmod go-w ${open})`,
  );
});

test("a sticky directory (like /tmp) is a trusted parent only of root's entries", () => {
  const sticky = made('sticky');
  chmodSync(sticky, 0o1777);
  expect(untrustedPathProblem(made('sticky', 'root-owned', 'x'))).toBeUndefined();
  const theirs = made('sticky', 'theirs');
  chownSync(theirs, 1000, 1000);
  expect(untrustedPathProblem(made('sticky', 'theirs', 'x'))).toMatch(
    new RegExp(`^${theirs} belongs to uid 1000 in the sticky directory ${sticky}: that user can replace it`),
  );
  // The leaf too: in a sticky directory its owner can rename it away.
  expect(untrustedPathProblem(theirs)).toMatch(/in the sticky directory/);
});

test('a symlink on the way is refused once the path should be resolved', () => {
  const target = made('target');
  symlinkSync(target, join(dir, 'link'));
  expect(untrustedPathProblem(join(dir, 'link'))).toBe(
    `${join(dir, 'link')} is a symbolic link (give the path it resolves to)`,
  );
});

test('before creating: the deepest existing directory must be closed to others', () => {
  expect(untrustedPathProblemBeforeCreating(join(dir, 'new', 'deeper'))).toBeUndefined();
  const user = made('user');
  chownSync(user, 1000, 1000);
  expect(untrustedPathProblemBeforeCreating(join(user, 'new'))).toMatch(
    new RegExp(`^${user} belongs to uid 1000`),
  );
});

test('a held directory says when its path no longer names it, and refuses what cannot be trusted', () => {
  const path = made('scratch');
  const held = holdCheckedDirectory(path);
  try {
    expect(held.changed()).toBeUndefined();
    renameSync(path, join(dir, 'moved'));
    mkdirSync(path);
    expect(held.changed()).toBe(`${path} is no longer the directory that was checked (replaced since)`);
    rmSync(path, { recursive: true });
    symlinkSync(join(dir, 'moved'), path);
    expect(held.changed()).toBe(`${path} is a symbolic link (give the path it resolves to)`);
  } finally {
    held.release();
  }
  expect(() => holdCheckedDirectory(path)).toThrow(MountfleetError);
});

test('a configured path may go through a symlink only where nobody but root can re-point it', () => {
  const real = made('real');
  symlinkSync(real, join(dir, 'by-root'));
  expect(untrustedConfiguredPathProblem(join(dir, 'by-root', 'data'))).toBeUndefined();

  const user = made('user');
  chownSync(user, 1000, 1000);
  symlinkSync(real, join(user, 'link'));
  expect(untrustedConfiguredPathProblem(join(user, 'link', 'data'))).toMatch(
    new RegExp(
      `^the symlink ${join(user, 'link')} is in a directory others can change: ${user} belongs to uid 1000`,
    ),
  );

  const sticky = made('sticky');
  chmodSync(sticky, 0o1777);
  symlinkSync(real, join(sticky, 'theirs'));
  lchownSync(join(sticky, 'theirs'), 1000, 1000);
  expect(untrustedConfiguredPathProblem(join(sticky, 'theirs', 'data'))).toBe(
    `the symlink ${join(sticky, 'theirs')} belongs to uid 1000 in the sticky directory ${sticky}: that user can re-point it; use a directory root owns`,
  );

  // Where the link leads must be trusted too.
  const target = made('user', 'target');
  symlinkSync(target, join(dir, 'to-user'));
  expect(untrustedConfiguredPathProblem(join(dir, 'to-user', 'data'))).toMatch(
    new RegExp(`^${user} belongs to uid 1000`),
  );
});
