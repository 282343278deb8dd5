/**
 * The wait script the ECS agent is ordered behind (lib/private/batch-user-data.ts), run for real under dash and
 * bash: it returns for paths that are mount points, and one that is not keeps it waiting until a file system is
 * mounted there (in a private mount namespace of the test's own).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitScript } from '../../../lib/private/batch-user-data';

const SHELLS = ['dash', 'bash'].filter((shell) => spawnSync(shell, ['-c', 'true']).status === 0);
const CAN_UNSHARE = spawnSync('unshare', ['-m', 'true']).status === 0;

let dir: string;
let script: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-wait-mounts-'));
  script = join(dir, 'wait-for-mounts');
  writeFileSync(script, waitScript(), { mode: 0o755 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('both shells are here (the script must work under dash, sh on Debian and Ubuntu images)', () => {
  expect(SHELLS).toEqual(['dash', 'bash']);
  expect(spawnSync('dash', ['-n', script]).status).toBe(0);
});

test.each(SHELLS)('%s: returns at once when every path is a mount point', (shell) => {
  const r = spawnSync(shell, [script, '/', '/proc'], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status).toBe(0);
});

(CAN_UNSHARE ? test.each(SHELLS) : test.skip.each(SHELLS))(
  '%s: waits for a path that is not mounted yet, and returns once it is',
  (shell) => {
    const target = join(dir, 'data');
    // In a private mount namespace: start the wait, mount once it waits, and wait for it to return.
    const scenario = [
      `mkdir -p '${target}'`,
      `${shell} '${script}' '${target}' & pid=$!`,
      // Mounted only once the script is inside its wait (a findmnt child): returning before that fails the test.
      'until pgrep -P "$pid" findmnt >/dev/null; do kill -0 "$pid" 2>/dev/null || { echo "returned before the mount"; exit 3; }; done',
      `mount -t tmpfs mf-test '${target}'`,
      'wait "$pid"; echo "returned $?"',
    ].join('\n');
    const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', scenario], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.stdout.trim()).toBe('returned 0');
  },
);
