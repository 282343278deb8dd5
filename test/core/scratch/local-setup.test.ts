import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolvedPath } from '../../../core/scratch/local-setup';

describe('resolvedPath', () => {
  let dir: string;
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'mf-local-setup-')));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps a path without symlinks, even one not made yet', () => {
    const log: string[] = [];
    expect(resolvedPath(join(dir, 'scratch'), (l) => log.push(l))).toBe(join(dir, 'scratch'));
    expect(log).toEqual([]);
  });

  it('follows a symlink to a real directory, and says so', () => {
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const log: string[] = [];
    expect(resolvedPath(join(dir, 'link', 'scratch'), (l) => log.push(l))).toBe(join(dir, 'real', 'scratch'));
    expect(log).toEqual([
      `--path ${join(dir, 'link', 'scratch')} resolves through a symlink to ${join(dir, 'real', 'scratch')}: mounting there`,
    ]);
  });

  it('holds the path it resolves to to the mount-path rules: /mnt/x → /etc is /etc', () => {
    symlinkSync('/etc', join(dir, 'etc'));
    expect(() => resolvedPath(join(dir, 'etc'), () => undefined)).toThrow(
      new RegExp(
        `^--path ${join(dir, 'etc')} resolves through a symlink to /etc, which .*: pass a real directory$`,
      ),
    );
  });
});
