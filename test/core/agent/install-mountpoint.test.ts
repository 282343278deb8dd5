/**
 * The pinned install against a local release server: packages signed with a throw-away key generated
 * here (gpg --quick-gen-key, no passphrase); the package manager is a recorder, so nothing is installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../../core/common/clock';
import {
  installMountpoint,
  SignatureError,
  type InstallOptions,
} from '../../../core/agent/install-mountpoint';
import { STANDIN } from '../../agent/commands/up/failover-harness';

const VERSION = '1.24.0';
const PACKAGE_PATH = `/${VERSION}/x86_64/mount-s3-${VERSION}-x86_64.rpm`;
let dir: string;
let server: Server;
let releaseUrl: string;
let fingerprint: string;
const files = new Map<string, Buffer>();

function gpg(home: string, ...args: string[]): string {
  return execFileSync(
    'gpg',
    ['--homedir', home, '--batch', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', '', ...args],
    {
      encoding: 'utf8',
      stdio: 'pipe',
    },
  );
}
function newKey(home: string, name: string): string {
  mkdirSync(home, { mode: 0o700 });
  gpg(home, '--quick-gen-key', `${name} <${name}@example.invalid>`, 'ed25519', 'sign', 'never');
  return /^fpr:(?:[^:]*:){8}([0-9A-F]{40}):/m.exec(
    gpg(home, '--with-colons', '--fingerprint', '--list-keys'),
  )![1];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-install-test-'));
  const release = join(dir, 'release-key');
  const other = join(dir, 'other-key');
  fingerprint = newKey(release, 'release');
  const otherFingerprint = newKey(other, 'other');
  const pkg = Buffer.from('pretend this is mount-s3-1.24.0-x86_64.rpm');
  writeFileSync(join(dir, 'pkg'), pkg);
  gpg(release, '--armor', '--detach-sign', '--output', join(dir, 'pkg.asc'), join(dir, 'pkg'));
  gpg(other, '--armor', '--detach-sign', '--output', join(dir, 'pkg.other.asc'), join(dir, 'pkg'));
  files.set(PACKAGE_PATH, pkg);
  files.set(`${PACKAGE_PATH}.asc`, readFileSync(join(dir, 'pkg.asc')));
  files.set('/public_keys/KEYS', Buffer.from(gpg(release, '--armor', '--export', fingerprint)));
  files.set('/other/KEYS', Buffer.from(gpg(other, '--armor', '--export', otherFingerprint)));
  server = createServer((req, res) => {
    const body = files.get(req.url ?? '');
    res.writeHead(body ? 200 : 404).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  releaseUrl = `http://127.0.0.1:${port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const noWait: Clock = { now: () => 0, sleep: async () => {} };
function options(overrides: Partial<InstallOptions> = {}): InstallOptions & { installed: string[] } {
  const installed: string[] = [];
  return {
    installed,
    version: VERSION,
    keyFingerprint: fingerprint,
    releaseUrl,
    keysUrl: `${releaseUrl}/public_keys/KEYS`,
    mountS3: join(dir, 'no-mount-s3-here'),
    architecture: 'x86_64',
    format: 'rpm',
    clock: noWait,
    installPackage: async (file) => {
      installed.push(readFileSync(file, 'utf8'));
    },
    ...overrides,
  };
}

test('downloads, verifies against the pinned fingerprint and installs', async () => {
  const o = options();
  await expect(installMountpoint(o)).resolves.toMatchObject({ action: 'installed', attempts: 1 });
  expect(o.installed).toEqual(['pretend this is mount-s3-1.24.0-x86_64.rpm']);
});

test.each([
  {
    name: 'a tampered package is refused and never installed',
    path: PACKAGE_PATH,
    served: () => Buffer.from('pretend this is mount-s3-1.24.0-x86_64.rpm plus a backdoor'),
  },
  {
    name: 'a package signed by a key other than the pinned one is refused',
    path: `${PACKAGE_PATH}.asc`,
    served: () => readFileSync(join(dir, 'pkg.other.asc')),
  },
])('$name', async ({ path, served }) => {
  const original = files.get(path)!;
  files.set(path, served());
  try {
    const o = options();
    await expect(installMountpoint(o)).rejects.toThrow(SignatureError);
    expect(o.installed).toEqual([]);
  } finally {
    files.set(path, original);
  }
});

test('a key file whose key is not the pinned fingerprint is refused', async () => {
  const o = options({ keysUrl: `${releaseUrl}/other/KEYS` });
  await expect(installMountpoint(o)).rejects.toThrow(/expected exactly/);
  expect(o.installed).toEqual([]);
});

test('a busy package manager is retried with backoff', async () => {
  let calls = 0;
  const sleeps: number[] = [];
  const o = options({
    clock: { now: () => 0, sleep: async (ms) => void sleeps.push(ms) },
    installPackage: async () => {
      if (++calls < 4) throw new Error('Another app is currently holding the yum lock');
    },
  });
  await expect(installMountpoint(o)).resolves.toMatchObject({ action: 'installed', attempts: 4 });
  // backoffDelay(n, 2000, 30000): 50-100% of 2 s, 4 s, 8 s.
  expect(sleeps).toHaveLength(3);
  [1000, 2000, 4000].forEach((min, n) => {
    expect(sleeps[n]).toBeGreaterThanOrEqual(min);
    expect(sleeps[n]).toBeLessThanOrEqual(2 * min);
  });
});

test('skips when mount-s3 --version already reports the pinned version', async () => {
  const o = options({ mountS3: STANDIN });
  await expect(installMountpoint(o)).resolves.toEqual({ action: 'skipped', version: VERSION });
  expect(o.installed).toEqual([]);
});
