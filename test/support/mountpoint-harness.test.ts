/**
 * The real Mountpoint file system (the project's harness on the published crates, or an official
 * `mount-s3` named by MOUNTFLEET_MOUNT_S3) against moto, mounted for real in a private mount namespace.
 * S3 goes through the fault proxy, which counts requests and stands in for Express CreateSession.
 */
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isDirectoryBucket, s3Client, s3ExpressClient } from '../../core/aws/clients';
import { parseAgentConfig, type AgentConfig } from '../../core/contract/agent-config';
import { EXAMPLE_CONFIG, tuneForInstanceType, type TuneRequest } from '../../core/instance/tune-report';
import { useEmulator } from './emulator';
import { answerExpressCreateSession } from './express-session-standin';
import { FaultProxy } from './fault-proxy';
import { MountNamespace } from './mount-namespace';
import { realMountpoint } from './real-mountpoint';
import { mixedMountsConfig } from './fixtures';

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

describeReal('command line (no mount)', () => {
  const runBinary = (args: string[]) =>
    promisify(execFile)(binary, args, { timeout: 10_000 }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (e: { code: number; stderr: string }) => ({ code: e.code, out: e.stderr }),
    );

  test('--version names Mountpoint 1.24.0 (and the harness when it is one)', async () => {
    const { code, out } = await runBinary(['--version']);
    expect(code).toBe(0);
    expect(out).toMatch(/^mount-s3 1\.24\.0/);
    if (!('skip' in mountpoint) && mountpoint.kind === 'harness')
      expect(out).toMatch(/mountfleet test harness on mountpoint-s3-fs 0\.11\.0/);
  });

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
  test.each(usageErrors)('%s exits 2', async (_what, args) => {
    const { code, out } = await runBinary(args);
    expect(code).toBe(2);
    expect(out).toMatch(/error:/);
  });

  test('--cache to a directory that does not exist fails before mounting', async () => {
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
  /** What Mountpoint needs against moto besides the endpoint flags: any credentials, no IMDS. */
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
      () => ns.pidsOf(binary, mountPoint).length === 0,
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

  test('kill -9 leaves a dead mount: accesses fail with ENOTCONN until umount -l', async () => {
    await bucketWith('harness-kill', { 'k.txt': 'k' });
    const mnt = await mounted(['harness-kill', freshDir('killed')]);
    const [pid] = ns.pidsOf(binary, mnt);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await until('the killed process to go', () => ns.pidsOf(binary, mnt).length === 0);
    // The first access can still race the kernel's teardown of the connection: a request in flight as
    // the last thread dies fails with ECONNABORTED. From then on every access fails with ENOTCONN.
    expect(['ENOTCONN', 'ECONNABORTED']).toContain(await errorCode(stat(ns.path(mnt))));
    expect(await errorCode(stat(ns.path(mnt)))).toBe('ENOTCONN');
    expect(await errorCode(readdir(ns.path(mnt)))).toBe('ENOTCONN');
    expect(await errorCode(readFile(ns.path(`${mnt}/k.txt`)))).toBe('ENOTCONN');
    expect(ns.mountAt(mnt)).toMatch(/^fuse/);
    expect((await ns.run(['umount', '-l', mnt])).code).toBe(0);
    expect(ns.mountAt(mnt)).toBeUndefined();
  });

  test('SIGTERM unmounts and exits', async () => {
    await bucketWith('harness-term', { 'k.txt': 'k' });
    const mnt = await mounted(['harness-term', freshDir('term')]);
    const [pid] = ns.pidsOf(binary, mnt);
    process.kill(pid, 'SIGTERM');
    await until('the unmount after SIGTERM', () => ns.mountAt(mnt) === undefined);
    await until('the process to exit after SIGTERM', () => ns.pidsOf(binary, mnt).length === 0);
  });

  test('--uid, --gid, --dir-mode and --file-mode set what stat shows', async () => {
    await bucketWith('harness-owner', { 'd/k.txt': 'k' });
    const mnt = await mounted([
      ...['--uid', '1234', '--gid', '2345', '--dir-mode', '0750', '--file-mode', '0640'],
      ...['harness-owner', freshDir('owner')],
    ]);
    const file = await stat(ns.path(`${mnt}/d/k.txt`));
    const directory = await stat(ns.path(`${mnt}/d`));
    expect([file.uid, file.gid, file.mode & 0o777]).toEqual([1234, 2345, 0o640]);
    expect([directory.uid, directory.gid, directory.mode & 0o777]).toEqual([1234, 2345, 0o750]);
    await unmount(mnt);
  });

  test('--log-directory with --debug writes a Mountpoint log file there', async () => {
    await bucketWith('harness-log', { 'k.txt': 'k' });
    const logs = freshDir('logs');
    const mnt = await mounted(['--log-directory', logs, '--debug', 'harness-log', freshDir('logged')]);
    await readFile(ns.path(`${mnt}/k.txt`));
    await unmount(mnt);
    const files = readdirSync(logs);
    expect(files).toEqual([expect.stringMatching(/^mountpoint-s3-.*\.log$/)]);
    expect(readFileSync(join(logs, files[0]), 'utf8')).toMatch(/DEBUG.*harness-log/);
  });

  test('--foreground serves until SIGTERM, then unmounts and exits 0', async () => {
    await bucketWith('harness-fg', { 'k.txt': 'fg' });
    const mnt = freshDir('fg');
    const child = ns.spawn(
      [binary, '--foreground', '--endpoint-url', proxy.endpoint, '--force-path-style', 'harness-fg', mnt],
      env(),
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await until('the foreground mount', () => ns.mountAt(mnt) !== undefined, 10_000);
    expect(await readFile(ns.path(`${mnt}/k.txt`), 'utf8')).toBe('fg');
    const [pid] = ns.pidsOf(binary, mnt);
    process.kill(pid, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(ns.mountAt(mnt)).toBeUndefined();
  });

  test("background mode fails with the mounting process's error (a bucket that does not exist)", async () => {
    const mnt = freshDir('nobucket');
    const started = Date.now();
    const result = await mountS3(['harness-no-such-bucket', mnt]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/harness-no-such-bucket/);
    expect(result.stderr).toMatch(/NoSuchBucket|does not exist/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ns.mountAt(mnt)).toBeUndefined();
    expect(ns.pidsOf(binary, mnt)).toEqual([]);
  });

  test('--auto-unmount: after kill -9 the mount is removed instead of left dead', async () => {
    await bucketWith('harness-auto', { 'k.txt': 'k' });
    const mnt = await mounted(['--auto-unmount', 'harness-auto', freshDir('auto')]);
    const [pid] = ns.pidsOf(binary, mnt);
    process.kill(pid, 'SIGKILL');
    await until('the mount to be removed', () => ns.mountAt(mnt) === undefined);
    expect(ns.pidsOf(binary, mnt)).toEqual([]);
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

  describe('every command line the agent renders, per tuning profile, starts and serves', () => {
    const mixed = mixedMountsConfig();
    const pinned120 = parseAgentConfig({
      version: 1,
      fleetId: 'old',
      region: 'us-east-1',
      mounts: [{ bucket: 'data-old', path: '/mnt/data', dataset: 'immutable', cache: 'local' }],
      mountpoint: { version: '1.20.0' },
    });
    const nics = (n: number) => Array.from({ length: n }, (_, i) => `ens${5 + i}`);
    // The instance types of test/core/tuner/plan-mounts.test.ts, the example config unless named.
    const profiles: [string, TuneRequest][] = [
      ...[
        't3.medium',
        't3.large',
        'c6i.4xlarge',
        'm7g.2xlarge',
        'g5.xlarge',
        'g5.12xlarge',
        'i4i.8xlarge',
        'm5d.8xlarge',
      ].map((t): [string, TuneRequest] => [t, { instanceType: t }]),
      ['p4d.24xlarge, 4 network cards', { instanceType: 'p4d.24xlarge', interfaces: nics(4) }],
      ['p5.48xlarge, 32 network cards', { instanceType: 'p5.48xlarge', interfaces: nics(32) }],
      ['p5.48xlarge, cards unknown', { instanceType: 'p5.48xlarge' }],
      [
        'c6i.4xlarge, read-write and mutable mounts in eu-west-1',
        { instanceType: 'c6i.4xlarge', config: mixed, azId: 'euw1-az3' },
      ],
      ['g5.xlarge, pinned Mountpoint 1.20.0', { instanceType: 'g5.xlarge', config: pinned120 }],
    ];

    const createBuckets = async (config: AgentConfig) => {
      const client = s3Client({ maxAttempts: 1, region: config.region });
      for (const m of config.mounts) {
        await client.send(
          new CreateBucketCommand({
            Bucket: m.bucket,
            ...(config.region === 'us-east-1'
              ? {}
              : {
                  CreateBucketConfiguration: {
                    LocationConstraint: config.region as BucketLocationConstraint,
                  },
                }),
          }),
        );
        await client.send(
          new PutObjectCommand({ Bucket: m.bucket, Key: `${m.prefix}seed.txt`, Body: `seed of ${m.bucket}` }),
        );
      }
      for (const bucket of Object.values(config.expressCache?.buckets ?? {}))
        await s3ExpressClient({ maxAttempts: 1 }).send(new CreateBucketCommand({ Bucket: bucket }));
    };

    /** Only where it points: the mount point and the cache directory become fresh local directories, and
     * network interfaces the loopback (the endpoint and path style are added by mountS3). */
    const pointedHere = (args: readonly string[]) => {
      const out = [...args];
      out[out.length - 1] = freshDir('profile');
      for (let i = 0; i < out.length - 2; i++) {
        if (out[i] === '--cache') out[i + 1] = freshDir('profile-cache');
        if (out[i] === '--bind') out[i + 1] = 'lo';
      }
      return out;
    };

    test.each(profiles)('%s', async (_name, request) => {
      const report = await tuneForInstanceType(request);
      const config = request.config ?? parseAgentConfig(EXAMPLE_CONFIG, '(example)');
      await createBuckets(config);
      let processes = 0;
      for (const plan of report.plan.mounts) {
        for (const process_ of plan.processes) {
          const args = pointedHere(process_.args);
          const result = await mountS3(args, process_.environment);
          expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
          const mnt = args[args.length - 1];
          expect(await readFile(ns.path(`${mnt}/seed.txt`), 'utf8')).toBe(`seed of ${plan.mount.bucket}`);
          const write = writeFile(ns.path(`${mnt}/written-${process_.role}.txt`), process_.role);
          if (args.includes('--read-only')) {
            expect(await errorCode(write)).toBe('EROFS');
          } else {
            await write;
            const object = await s3Client({ maxAttempts: 1, region: config.region }).send(
              new GetObjectCommand({
                Bucket: plan.mount.bucket,
                Key: `${plan.mount.prefix}written-${process_.role}.txt`,
              }),
            );
            expect(await object.Body!.transformToString()).toBe(process_.role);
          }
          await unmount(mnt);
          processes++;
        }
      }
      expect(processes).toBeGreaterThan(0);
      // Express-cached processes really used the cache bucket.
      const xz = report.plan.mounts.flatMap((m) => m.processes).filter((p) => p.args.includes('--cache-xz'));
      if (xz.length > 0)
        expect(
          proxy
            .requests()
            .some((r) => r.operation === 'PutObject' && isDirectoryBucket(r.path.split('/')[1])),
        ).toBe(true);
    });
  });
});
