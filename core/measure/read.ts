/**
 * Read throughput of a mounted path, in three scenarios: many small files read in parallel
 * (latency-bound, like a data loader), large files read sequentially (prefetch-bound), and both
 * repeated over epochs (what a cache changes: epoch 2 onwards). Reports files/s and MiB/s per epoch.
 */
import { statSync } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../common';

interface ReadBenchOptions {
  readonly path: string;
  /** Files at or above this size are "large" and read sequentially. @default 8 MiB */
  readonly largeMinBytes?: number;
  /** Small files read at once. @default 32 */
  readonly concurrency?: number;
  /** @default 2 */
  readonly epochs?: number;
  /** Read size for large files. @default 1 MiB */
  readonly blockBytes?: number;
  /** Milliseconds, high resolution. @default performance.now */
  readonly now?: () => number;
  readonly onResult?: (result: ReadResult) => void;
}

interface ReadResult {
  readonly epoch: number;
  readonly scenario: 'small-parallel' | 'large-sequential';
  readonly files: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly filesPerSecond: number;
  readonly mibPerSecond: number;
}

interface FileInfo {
  readonly path: string;
  readonly size: number;
}

/** Every regular file below `dir`, in path order, without a stat (a readdir's types suffice). */
export async function listFilePaths(dir: string): Promise<string[]> {
  const paths: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) paths.push(...(await listFilePaths(full)));
    else if (entry.isFile()) paths.push(full);
  }
  return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Every regular file below `dir` with its size, in path order. */
async function listFiles(dir: string): Promise<FileInfo[]> {
  return Promise.all(
    (await listFilePaths(dir)).map(async (path) => ({ path, size: (await stat(path)).size })),
  );
}

/** Reads a whole file in `buffer`-sized reads into that one reused buffer; returns the bytes read. */
export async function readThrough(path: string, buffer: Buffer): Promise<number> {
  const handle = await open(path, 'r');
  try {
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return total;
      total += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/**
 * Reads every file of `paths` whole, `readers` at a time (each with its own `blockBytes` buffer), as a data
 * loader's workers do; resolves to the bytes read.
 */
export async function readFiles(
  paths: readonly string[],
  readers: number,
  blockBytes = 1024 * 1024,
): Promise<number> {
  let next = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: Math.min(readers, paths.length) }, async () => {
      const buffer = Buffer.allocUnsafe(blockBytes);
      while (next < paths.length) {
        // Not `bytes += await ...`: that reads `bytes` before the await and loses the other workers' counts.
        const read = await readThrough(paths[next++], buffer);
        bytes += read;
      }
    }),
  );
  return bytes;
}

async function timedScenario(
  now: () => number,
  files: readonly FileInfo[],
  workers: number,
  blockBytes: number,
): Promise<{ bytes: number; seconds: number }> {
  const start = now();
  const bytes = await readFiles(
    files.map((f) => f.path),
    workers,
    blockBytes,
  );
  return { bytes, seconds: (now() - start) / 1000 };
}

/** `bench read --path DIR`: a missing or non-directory path is a typo, said before anything is read (exit 2). */
function checkReadableDirectory(path: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    throw new UsageError(
      `--path "${path}": no such directory; give the directory to read, e.g. --path /mnt/imagenet`,
    );
  }
  if (!isDirectory)
    throw new UsageError(
      `--path "${path}": not a directory; give the directory to read, e.g. --path /mnt/imagenet`,
    );
}

/** Reads the path's files per scenario and epoch; a path that is no directory is a UsageError naming --path. */
export async function benchRead(options: ReadBenchOptions): Promise<ReadResult[]> {
  checkReadableDirectory(options.path);
  const largeMin = options.largeMinBytes ?? 8 * 1024 * 1024;
  const concurrency = options.concurrency ?? 32;
  const epochs = options.epochs ?? 2;
  const blockBytes = options.blockBytes ?? 1024 * 1024;
  const now = options.now ?? (() => performance.now());
  const files = await listFiles(options.path);
  const scenarios = [
    {
      scenario: 'small-parallel' as const,
      files: files.filter((f) => f.size < largeMin),
      workers: concurrency,
    },
    { scenario: 'large-sequential' as const, files: files.filter((f) => f.size >= largeMin), workers: 1 },
  ].filter((s) => s.files.length > 0);
  if (scenarios.length === 0) throw new Error(`${options.path}: no files to read`);

  const results: ReadResult[] = [];
  for (let epoch = 1; epoch <= epochs; epoch++) {
    for (const s of scenarios) {
      const { bytes, seconds } = await timedScenario(now, s.files, s.workers, blockBytes);
      const result: ReadResult = {
        epoch,
        scenario: s.scenario,
        files: s.files.length,
        bytes,
        seconds,
        filesPerSecond: s.files.length / seconds,
        mibPerSecond: bytes / 1024 / 1024 / seconds,
      };
      results.push(result);
      options.onResult?.(result);
    }
  }
  return results;
}
