/**
 * STAND-IN for Mountpoint for Amazon S3 (`mount-s3`) 1.24.0 — NOT Mountpoint. Tests put it at
 * MOUNTFLEET_MOUNT_S3 because the real binary cannot reach S3 from here. See README.md.
 *
 * It takes Mountpoint's exact command line (cli-spec.ts) and, instead of S3, serves the local directory
 * `$MOUNT_S3_STANDIN_BUCKETS/<bucket>/<prefix>` at the mount point: a read-only overlay mount for
 * `--read-only` (its own file system, so each mount is distinguishable by st_dev, like a FUSE mount), a bind
 * mount otherwise. With `--cache-xz` it writes `_mountpoint_cache_metadata` to the cache bucket through
 * the S3 endpoint first, as Mountpoint does, and fails the mount if that fails. Background mode (the
 * default) forks a daemon and exits once the mount is ready; `-f` stays in the foreground. The daemon
 * unmounts on SIGTERM/SIGINT and exits when someone else unmounts it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, UsageError, USAGE, type ParsedArgs } from './cli-spec';

export const STANDIN_VERSION = process.env.MOUNT_S3_STANDIN_VERSION ?? '1.24.0';
const DAEMON_ENV = 'MOUNT_S3_STANDIN_DAEMON';
const READY_TIMEOUT_MS = Number(process.env.MOUNT_S3_STANDIN_READY_TIMEOUT_MS ?? 30000);

function fail(message: string, code = 1): never {
  process.stderr.write(`Error: ${message}\n`);
  process.exit(code);
}

function mountId(directory: string): number | undefined {
  const target = directory.replace(/\/+$/, '');
  const line = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.split(' ')[4] === target)
    .at(-1);
  return line ? Number(line.split(' ')[0]) : undefined;
}

function stillMounted(id: number): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => Number(l.split(' ')[0]) === id);
}

async function writeCacheMetadata(bucket: string, sourceBucket: string): Promise<void> {
  // Loaded only here: the SDK costs a second of start-up that mounts without --cache-xz need not pay.
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  const { s3ExpressClient } = await import('../../../core/aws/clients');
  const client = s3ExpressClient({ maxAttempts: Number(process.env.AWS_MAX_ATTEMPTS ?? 10) });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), READY_TIMEOUT_MS);
  try {
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: '_mountpoint_cache_metadata',
        Body: JSON.stringify({ source_bucket_name: sourceBucket, block_size: 1048576 }),
      }),
      { abortSignal: abort.signal },
    );
  } catch (e) {
    throw new Error(
      abort.signal.aborted
        ? `Timeout after ${READY_TIMEOUT_MS / 1000} seconds while waiting for mount process to be ready`
        : `initial PutObject failed for shared cache bucket ${bucket}: ${(e as Error).name}`,
      { cause: e },
    );
  } finally {
    clearTimeout(timer);
    client.destroy();
  }
}

/** Mounts and serves until unmounted; reports readiness through `ready`. */
async function serve(args: ParsedArgs, ready: (ok: boolean, message: string) => void): Promise<void> {
  const root = process.env.MOUNT_S3_STANDIN_BUCKETS;
  if (!root) return ready(false, 'MOUNT_S3_STANDIN_BUCKETS is not set (the stand-in serves buckets from it)');
  const prefix = args.options.get('prefix')?.[0] ?? '';
  const source = join(root, args.bucket, prefix);
  if (!existsSync(join(root, args.bucket)))
    return ready(false, `Failed to create mount process: bucket ${args.bucket} does not exist`);
  if (!existsSync(source)) execFileSync('mkdir', ['-p', source]);
  const cacheXz = args.options.get('cache-xz')?.[0];
  if (cacheXz) {
    try {
      await writeCacheMetadata(cacheXz, args.bucket);
    } catch (e) {
      return ready(false, (e as Error).message);
    }
  }
  const readOnly = args.options.has('read-only');
  const scratch = mkdtempSync(join(tmpdir(), 'mount-s3-standin-'));
  try {
    if (readOnly) {
      // Two lower layers and no upper layer make a read-only overlay: a file system of its own.
      execFileSync('mkdir', ['-p', join(scratch, 'empty')]);
      execFileSync('mount', [
        '-t',
        'overlay',
        `mount-s3-standin:${args.bucket}`,
        '-o',
        `lowerdir=${source}:${join(scratch, 'empty')}`,
        args.directory,
      ]);
    } else {
      execFileSync('mount', ['--bind', source, args.directory]);
    }
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    return ready(false, `Failed to create FUSE session: ${(e as Error).message.split('\n')[0]}`);
  }
  const id = mountId(args.directory)!;
  const unmount = () => {
    if (stillMounted(id)) {
      try {
        execFileSync('umount', [args.directory], { stdio: 'ignore' });
      } catch {
        execFileSync('umount', ['-l', args.directory], { stdio: 'ignore' });
      }
    }
    rmSync(scratch, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', unmount);
  process.on('SIGINT', unmount);
  ready(true, `bucket ${args.bucket} is mounted at ${args.directory}`);
  // Like Mountpoint, exit when the file system is unmounted from outside (umount, fusermount -u).
  setInterval(() => {
    if (!stillMounted(id)) {
      rmSync(scratch, { recursive: true, force: true });
      process.exit(0);
    }
  }, 200);
}

async function main(argv: string[]): Promise<void> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`error: ${e.message}\n\n${USAGE}\n\nFor more information, try '--help'.\n`);
    process.exit(2);
  }
  if (args.version) {
    process.stdout.write(`mount-s3 ${STANDIN_VERSION}\n`);
    return;
  }
  if (args.help) {
    process.stdout.write(`Mountpoint for Amazon S3 (STAND-IN for tests)\n\n${USAGE}\n`);
    return;
  }
  let stat;
  try {
    stat = statSync(args.directory);
  } catch {
    fail(`mount point ${args.directory} does not exist`);
  }
  if (!stat.isDirectory()) fail(`mount point ${args.directory} is not a directory`);

  if (args.options.has('foreground')) {
    await serve(args, (ok, message) => {
      if (!ok) fail(message);
      process.stdout.write(`${message}\n`);
    });
    return;
  }
  if (process.env[DAEMON_ENV]) {
    // The daemon half: report readiness on fd 3, then detach from the parent's output.
    const status = createWriteStream('', { fd: 3 });
    await serve(args, (ok, message) => {
      status.end(ok ? '0' : `1${message}`);
      if (!ok) process.exit(1);
    });
    return;
  }
  // The parent half: start the daemon and wait for its verdict, like Mountpoint's fork + pipe.
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1], ...argv], {
    detached: true,
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
    env: { ...process.env, [DAEMON_ENV]: '1' },
  });
  let verdict = '';
  child.stdio[3]!.on('data', (d: Buffer) => (verdict += d.toString()));
  const timer = setTimeout(() => {
    child.kill('SIGTERM');
    fail(`Timeout after ${READY_TIMEOUT_MS / 1000} seconds while waiting for mount process to be ready`);
  }, READY_TIMEOUT_MS + 5000);
  child.stdio[3]!.on('end', () => {
    clearTimeout(timer);
    if (verdict.startsWith('0')) {
      process.stdout.write(`bucket ${args.bucket} is mounted at ${args.directory}\n`);
      child.unref();
      (child.stdio[3] as NodeJS.ReadableStream & { unref?: () => void }).unref?.();
      process.exit(0);
    }
    fail(verdict.slice(1) || 'Failed to create mount process');
  });
}

void main(process.argv.slice(2));
