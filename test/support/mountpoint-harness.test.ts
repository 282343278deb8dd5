/**
 * The real Mountpoint file system (the project's harness on the published crates, or an official
 * `mount-s3` named by MOUNTFLEET_MOUNT_S3) against moto, mounted for real in a private mount namespace.
 * S3 goes through the fault proxy, which counts requests and stands in for Express CreateSession.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { s3Client, s3ExpressClient } from '../../core/aws';
import { useEmulator } from './emulator';
import { answerExpressCreateSession } from './express-session-standin';
import { FaultProxy } from './fault-proxy';
import { MountNamespace } from './mount-namespace';
import { realMountpoint } from './real-mountpoint';

const mountpoint = realMountpoint();
const skip = 'skip' in mountpoint ? mountpoint.skip : undefined;
if (skip) console.warn(`mountpoint-harness.test.ts skipped: ${skip}`);
const describeReal = skip ? describe.skip : describe;
const binary = 'skip' in mountpoint ? '' : mountpoint.binary;

const emu = useEmulator();

const until = async (what: string, condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The errno code a file operation fails with, or undefined when it succeeds. */
const errorCode = (operation: Promise<unknown>): Promise<string | undefined> =>
  operation.then(
    () => undefined,
    (error: NodeJS.ErrnoException) => error.code,
  );

describe('command line (no mount)', () => {
  const runBinary = (args: string[]) =>
    promisify(execFile)(binary, args, { timeout: 10_000 }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (e: { code: number; stderr: string }) => ({ code: e.code, out: e.stderr }),
    );

  (skip ? test.skip : test)(
    '--version names Mountpoint 1.24.0 (and the harness when it is one)',
    async () => {
      const { code, out } = await runBinary(['--version']);
      expect(code).toBe(0);
      expect(out).toMatch(/^mount-s3 1\.24\.0/);
      if (!('skip' in mountpoint) && mountpoint.kind === 'harness')
        expect(out).toMatch(/mountfleet test harness on mountpoint-s3-fs 0\.11\.0/);
    },
  );

  const usageErrors: [string, string[]][] = [
    ['an unknown flag', ['--no-such-flag', 'bucket', '/mnt']],
    ['--memory-target below 512', ['--memory-target', '511', 'bucket', '/mnt']],
    ['--maximum-throughput-gbps not an integer', ['--maximum-throughput-gbps', '2.5', 'bucket', '/mnt']],
    ['--metadata-ttl not seconds/indefinite/minimal', ['--metadata-ttl', 'forever', 'bucket', '/mnt']],
    ['--prefix without a trailing slash', ['--prefix', 'train', 'bucket', '/mnt']],
    ['--dir-mode not octal', ['--dir-mode', '999', 'bucket', '/mnt']],
    ['--upload-checksums unknown', ['--upload-checksums', 'md5', 'bucket', '/mnt']],
    [
      '--sse-kms-key-id without --sse',
      ['--sse-kms-key-id', 'arn:aws:kms:us-east-1:123456789012:key/k', 'b12', '/m'],
    ],
    ['--max-cache-size without --cache', ['--max-cache-size', '10', 'bucket', '/mnt']],
    ['--allow-other with --allow-root', ['--allow-other', '--allow-root', 'bucket', '/mnt']],
    [
      '--part-size with --read-part-size',
      ['--part-size', '8388608', '--read-part-size', '8388608', 'bkt', '/m'],
    ],
    ['a bucket name that is too short', ['ab', '/mnt']],
    ['a missing directory argument', ['bucket']],
  ];
  (skip ? test.skip : test).each(usageErrors)('%s exits 2', async (_what, args) => {
    const { code, out } = await runBinary(args);
    expect(code).toBe(2);
    expect(out).toMatch(/error:/);
  });

  (skip ? test.skip : test)('--cache to a directory that does not exist fails before mounting', async () => {
    const missing = join(tmpdir(), `mountfleet-no-such-cache-${process.pid}`);
    const { code, out } = await runBinary(['--cache', missing, 'bucket', '/mnt']);
    expect(code).not.toBe(0);
    expect(out).toContain(missing);
    expect(existsSync(missing)).toBe(false);
  });
});

describeReal('mounted in a private mount namespace', () => {
  let ns: MountNamespace;
  let proxy: FaultProxy;
  let dir: string;
  let s3: S3Client;
  const env = () => ({
    ...process.env,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
  });

  beforeAll(async () => {
    ns = await MountNamespace.start();
    proxy = await FaultProxy.start({ target: emu.endpoint });
    dir = mkdtempSync(join(tmpdir(), 'mountfleet-harness-'));
  });
  beforeEach(() => {
    proxy.clear();
    proxy.resetStats();
    answerExpressCreateSession(proxy);
    s3 = s3Client({ maxAttempts: 1 });
  });
  afterAll(async () => {
    await ns?.stop();
    await proxy?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let mounts = 0;
  /** A fresh empty directory for a mount point or cache. */
  const freshDir = (name: string) => {
    const d = join(dir, `${name}-${++mounts}`);
    mkdirSync(d);
    return d;
  };
  const bucketWith = async (bucket: string, objects: Record<string, Buffer | string>) => {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    for (const [key, body] of Object.entries(objects))
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  };
  /** mount-s3 in background mode, as the agent runs it; resolves once it has exited. */
  const mountS3 = (args: readonly string[], extraEnv: Record<string, string> = {}) =>
    ns.run([binary, '--endpoint-url', proxy.endpoint, '--force-path-style', ...args], {
      env: { ...env(), ...extraEnv },
    });
  const mounted = async (args: readonly string[]) => {
    const mountPoint = args[args.length - 1];
    const result = await mountS3(args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ns.mountAt(mountPoint)).toMatch(/^fuse/);
    return mountPoint;
  };
  const unmount = async (mountPoint: string) => {
    expect((await ns.run(['umount', mountPoint])).code).toBe(0);
    await until(
      'the Mountpoint process to exit after the unmount',
      () => ns.pidsWith(mountPoint).length === 0,
    );
  };

  test('lists and reads a seeded object, writes a new one into the bucket, exits after an unmount', async () => {
    const body = randomBytes(3 * 1024 * 1024 + 17);
    await bucketWith('harness-data', { 'train/shard-0.bin': body, 'README.txt': 'hello\n' });
    const mnt = await mounted(['harness-data', freshDir('mnt')]);
    expect((await readdir(ns.path(mnt))).sort()).toEqual(['README.txt', 'train']);
    expect(await readdir(ns.path(`${mnt}/train`))).toEqual(['shard-0.bin']);
    expect((await stat(ns.path(`${mnt}/train/shard-0.bin`))).size).toBe(body.length);
    expect((await readFile(ns.path(`${mnt}/train/shard-0.bin`))).equals(body)).toBe(true);
    expect(proxy.count('s3', 'GetObject')).toBeGreaterThan(0);

    await writeFile(ns.path(`${mnt}/result.txt`), 'written through the mount\n');
    const written = await s3.send(new GetObjectCommand({ Bucket: 'harness-data', Key: 'result.txt' }));
    expect(await written.Body!.transformToString()).toBe('written through the mount\n');
    await unmount(mnt);
  });

  test('--read-only refuses writes (EROFS)', async () => {
    await bucketWith('harness-ro', { 'a.txt': 'a' });
    const mnt = await mounted(['--read-only', 'harness-ro', freshDir('ro')]);
    expect(await readFile(ns.path(`${mnt}/a.txt`), 'utf8')).toBe('a');
    expect(await errorCode(writeFile(ns.path(`${mnt}/b.txt`), 'b'))).toBe('EROFS');
    expect(proxy.count('s3', 'PutObject')).toBe(0);
    await unmount(mnt);
  });

  test('--prefix shows only that prefix', async () => {
    await bucketWith('harness-prefix', { 'a/x.txt': 'x', 'b/y.txt': 'y', 'top.txt': 't' });
    const mnt = await mounted(['--prefix', 'a/', 'harness-prefix', freshDir('prefix')]);
    expect(await readdir(ns.path(mnt))).toEqual(['x.txt']);
    expect(await readFile(ns.path(`${mnt}/x.txt`), 'utf8')).toBe('x');
    await unmount(mnt);
  });

  test('--cache DIR makes DIR/mountpoint-cache and serves a re-read without a GET (none without it)', async () => {
    const body = randomBytes(2 * 1024 * 1024);
    await bucketWith('harness-cache', { 'data.bin': body });
    const rereadGets = async (args: string[]) => {
      const mnt = await mounted([...args, 'harness-cache', freshDir('cached')]);
      expect((await readFile(ns.path(`${mnt}/data.bin`))).equals(body)).toBe(true);
      proxy.resetStats();
      expect((await readFile(ns.path(`${mnt}/data.bin`))).equals(body)).toBe(true);
      const gets = proxy.count('s3', 'GetObject');
      await unmount(mnt);
      return gets;
    };
    // The control: without a data cache the re-read goes to S3 again, so the page cache does not hide it.
    expect(await rereadGets(['--metadata-ttl', 'indefinite'])).toBeGreaterThan(0);
    const cache = freshDir('cache');
    expect(await rereadGets(['--cache', cache, '--metadata-ttl', 'indefinite'])).toBe(0);
    // Mountpoint removes its subdirectory at exit, and only that.
    expect(existsSync(cache)).toBe(true);
    expect(existsSync(join(cache, 'mountpoint-cache'))).toBe(false);
  });

  test('--cache DIR: the cache lives in DIR/mountpoint-cache while mounted', async () => {
    await bucketWith('harness-cache2', { 'k.txt': 'cached' });
    const cache = freshDir('cache');
    const mnt = await mounted(['--cache', cache, 'harness-cache2', freshDir('mnt')]);
    expect(await readFile(ns.path(`${mnt}/k.txt`), 'utf8')).toBe('cached');
    expect(statSync(join(cache, 'mountpoint-cache')).isDirectory()).toBe(true);
    await unmount(mnt);
  });

  test.each(['0', '300', 'indefinite', 'minimal'])(
    '--metadata-ttl %s is accepted and serves reads',
    async (ttl) => {
      await bucketWith('harness-ttl', { 'k.txt': ttl });
      const mnt = await mounted(['--metadata-ttl', ttl, 'harness-ttl', freshDir('ttl')]);
      expect(await readFile(ns.path(`${mnt}/k.txt`), 'utf8')).toBe(ttl);
      await unmount(mnt);
    },
  );

  test('kill -9 leaves a dead mount: every access fails with ENOTCONN until umount -l', async () => {
    await bucketWith('harness-kill', { 'k.txt': 'k' });
    const mnt = await mounted(['harness-kill', freshDir('killed')]);
    const [pid] = ns.pidsWith(mnt);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await until('the killed process to go', () => ns.pidsWith(mnt).length === 0);
    expect(await errorCode(stat(ns.path(mnt)))).toBe('ENOTCONN');
    expect(await errorCode(readFile(ns.path(`${mnt}/k.txt`)))).toBe('ENOTCONN');
    expect(ns.mountAt(mnt)).toMatch(/^fuse/);
    expect((await ns.run(['umount', '-l', mnt])).code).toBe(0);
    expect(ns.mountAt(mnt)).toBeUndefined();
  });

  test('SIGTERM unmounts and exits', async () => {
    await bucketWith('harness-term', { 'k.txt': 'k' });
    const mnt = await mounted(['harness-term', freshDir('term')]);
    const [pid] = ns.pidsWith(mnt);
    process.kill(pid, 'SIGTERM');
    await until('the unmount after SIGTERM', () => ns.mountAt(mnt) === undefined);
    await until('the process to exit after SIGTERM', () => ns.pidsWith(mnt).length === 0);
  });

  test('--cache-xz against the emulator: cache metadata and blocks land in the Express bucket', async () => {
    const body = randomBytes(200 * 1024);
    await bucketWith('harness-xz-source', { 'small.bin': body });
    await s3ExpressClient({ maxAttempts: 1 }).send(
      new CreateBucketCommand({ Bucket: 'harness--use1-az4--x-s3' }),
    );
    const mnt = await mounted(['--cache-xz', 'harness--use1-az4--x-s3', 'harness-xz-source', freshDir('xz')]);
    expect((await readFile(ns.path(`${mnt}/small.bin`))).equals(body)).toBe(true);
    await unmount(mnt);
    const cacheWrites = proxy
      .requests()
      .filter((r) => r.operation === 'PutObject' && r.path.startsWith('/harness--use1-az4--x-s3/'));
    expect(cacheWrites.some((r) => r.path.endsWith('/_mountpoint_cache_metadata'))).toBe(true);
    expect(cacheWrites.length).toBeGreaterThanOrEqual(2);
  });
});
