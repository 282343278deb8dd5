/**
 * The agent never mounts, binds or prepares a cache on a path another user could re-point: the supervisor
 * asks before every (re)start, the path switcher before every bind, and a cache directory is changed through a
 * descriptor of its own (a symlink in its place is refused, its target untouched). Real directories and
 * owners (the tests run as root); the mount commands are recorded, not run.
 */
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareCacheDirectory } from '../../../core/agent/cache-volume-setup';
import { Supervisor } from '../../../core/agent/mountpoint-supervisor';
import { PathSwitcher } from '../../../core/agent/path-switcher';

let dir: string;
let user: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-untrusted-'));
  user = join(dir, 'user');
  mkdirSync(user);
  chownSync(user, 1000, 1000);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the supervisor refuses to start Mountpoint on a path below a directory another user owns', async () => {
  const events: unknown[] = [];
  const supervisor = new Supervisor('/nonexistent/mount-s3', (e) => events.push(e));
  await expect(
    supervisor.start({ key: 'data/main', mountPoint: join(user, 'data'), args: [], environment: {} }),
  ).rejects.toThrow(
    `data/main: not mounting at ${join(user, 'data')}: ${user} belongs to uid 1000: that user can replace`,
  );
  expect(events).toEqual([]);
  expect(existsSync(join(user, 'data'))).toBe(false);
});

test('the path switcher refuses to bind onto such a path, and runs no mount', async () => {
  const calls: string[][] = [];
  const switcher = new PathSwitcher(join(user, 'data'), (program, args) => {
    calls.push([program, ...args]);
    return Promise.resolve('');
  });
  await expect(switcher.switchTo('/')).rejects.toThrow(
    `not binding / on ${join(user, 'data')}: ${user} belongs to uid 1000`,
  );
  expect(calls).toEqual([]);
});

test('a cache directory replaced by a symlink is refused, and what the link names keeps its owner and mode', () => {
  const victim = join(dir, 'victim');
  mkdirSync(victim, { mode: 0o755 });
  chownSync(victim, 1000, 1000);
  symlinkSync(victim, join(dir, 'cache'));
  expect(() => prepareCacheDirectory(join(dir, 'cache'))).toThrow(
    `cache directory ${join(dir, 'cache')} is not a directory (a symlink or a file is in the way)`,
  );
  const stats = statSync(victim);
  expect([stats.uid, stats.mode & 0o777]).toEqual([1000, 0o755]);

  prepareCacheDirectory(join(dir, 'real-cache'));
  expect(statSync(join(dir, 'real-cache')).mode & 0o777).toBe(0o700);
});
