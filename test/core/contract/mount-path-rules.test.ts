import {
  checkMountPath,
  checkMountPrefix,
  SYSTEM_DIRECTORIES,
  SYSTEM_TREES,
} from '../../../core/contract/mount-path-rules';

/**
 * Long segments and runs of slashes. The first two made the old pattern /^\/(?:[^/\0]+\/?)*$/ backtrack:
 * its time doubled with each character of the long segment (28 took 10 s under jest here).
 */
const PATHOLOGICAL_PATHS = [
  `/${'a'.repeat(28)}//`,
  `/mnt/${'a/'.repeat(40)}${'b'.repeat(28)}\0`,
  `/${'a/'.repeat(40)}!`,
  `${'/'.repeat(4000)}x`,
  `/mnt${'//'.repeat(2000)}..`,
];

describe('checkMountPath', () => {
  it.each(['/mnt/data', '/mnt/data/', '/var/lib/training', '/opt/datasets', '/run/user/data', '/data'])(
    'accepts %s',
    (path) => {
      expect(checkMountPath(path)).toBeUndefined();
    },
  );

  test.each([
    ['must be an absolute path', ''],
    ['must be an absolute path', 'mnt/data'],
    ['empty segments', '/mnt//data'],
    ['"." or ".." segments', '/mnt/./data'],
    ['"." or ".." segments', '/mnt/../etc'],
    ['"." or ".." segments', '/mnt/data/..'],
    ['control characters (found U+000A', '/mnt/da\nta'],
    ['control characters (found U+007F', '/mnt/data\u007f'],
    ['control characters', '/mnt/\0'],
    ['longer than 255', `/mnt/${'x'.repeat(256)}`],
    ['at most 4095', `/mnt/${'x/'.repeat(2100)}`],
    ['is a system directory', '/'],
    ['is a system directory', '/var'],
    ['is a system directory', '/run/'],
    ['in the system directory /etc', '/etc/mountfleet'],
    ['in the system directory /usr', '/usr/local/data'],
    ['in the system directory /proc', '/proc'],
    ['in the system directory /lib64', '/lib64'],
  ])('refuses a path: %s', (problem, path) => {
    expect(checkMountPath(path)).toContain(problem);
  });

  it('refuses every listed system directory and everything under the system trees', () => {
    for (const dir of SYSTEM_DIRECTORIES) expect(checkMountPath(dir)).toMatch(/system directory/);
    for (const tree of SYSTEM_TREES) {
      expect(checkMountPath(tree)).toMatch(/system directory/);
      expect(checkMountPath(`${tree}/x`)).toMatch(/system directory/);
    }
  });

  it('answers pathological paths in milliseconds', () => {
    for (const path of PATHOLOGICAL_PATHS) {
      const started = process.hrtime.bigint();
      checkMountPath(path);
      expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(50);
    }
  });
});

describe('checkMountPrefix', () => {
  it.each(['', 'datasets/', 'datasets/imagenet/', 'a b/'])('accepts %j', (prefix) => {
    expect(checkMountPrefix(prefix)).toBeUndefined();
  });

  it.each([
    ['*', '"*" or "?"'],
    ['data*/', '"*" or "?"'],
    ['data?/', '"*" or "?"'],
    ['/data/', 'not start with "/"'],
    ['data', 'end in "/"'],
    ['da\nta/', 'control characters'],
  ])('refuses %j', (prefix, problem) => {
    expect(checkMountPrefix(prefix)).toContain(problem);
  });
});
