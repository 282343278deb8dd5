/**
 * `mountfleet warm`: fills a mount's caches before a job by reading every file through the mount, so
 * Mountpoint stores what it reads in its own cache format (local `--cache`, shared `--cache-xz`). Cache
 * objects are never written directly: only Mountpoint knows its layout, and it changes between releases.
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { UsageError } from '../common';
import { listFilePaths, readThrough } from './read';

export interface WarmFile {
  readonly path: string;
  readonly size: number;
}

export interface WarmProgress {
  readonly files: number;
  readonly bytes: number;
  readonly totalFiles: number;
  readonly totalBytes: number;
}

export interface WarmResult extends WarmProgress {
  readonly seconds: number;
  readonly megabytesPerSecond: number;
  /** False when a stop ended the warm-up early. */
  readonly complete: boolean;
  readonly failed: readonly { readonly path: string; readonly error: string }[];
}

/** A manifest that cannot be used: bad input, reported before anything is read (exit 2, naming --manifest). */
const manifestError = (problem: string) => new UsageError(`--manifest: ${problem}`);

/**
 * The files a manifest lists: one path per line, relative to `dir` (or absolute inside it); blank lines
 * and lines starting with `#` are skipped. A path outside `dir` is refused with its line number.
 */
async function readManifest(manifest: string, dir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(manifest, 'utf8');
  } catch (err) {
    throw manifestError(`cannot read ${manifest}: ${(err as Error).message}`);
  }
  const paths: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const full = resolve(dir, line);
    const inside = relative(dir, full);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      throw manifestError(`${manifest} line ${i + 1}: "${line}" is not a file under ${dir}`);
    }
    paths.push(full);
  });
  return paths;
}

/** Sizes of the files to warm (a lookup each, which warms the metadata cache too), `parallel` at a time. */
export async function sizeFiles(paths: readonly string[], parallel: number): Promise<WarmFile[]> {
  const out: WarmFile[] = new Array(paths.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, paths.length) }, async () => {
      while (next < paths.length) {
        const i = next++;
        out[i] = { path: paths[i], size: (await stat(paths[i])).size };
      }
    }),
  );
  return out;
}

/** Every regular file under `dir`, or the ones a manifest lists. */
export async function filesToWarm(dir: string, manifest?: string): Promise<string[]> {
  return manifest ? readManifest(manifest, dir) : listFilePaths(dir);
}

/** Reads every file whole, `parallel` at a time; a file that fails is reported and the others go on. */
export async function warm(options: {
  readonly files: readonly WarmFile[];
  readonly parallel: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: WarmProgress) => void;
  /** @default performance.now */
  readonly now?: () => number;
}): Promise<WarmResult> {
  const { files, parallel, signal } = options;
  const now = options.now ?? (() => performance.now());
  const totalFiles = files.length;
  const totalBytes = files.reduce((a, f) => a + f.size, 0);
  const failed: { path: string; error: string }[] = [];
  let next = 0;
  let done = 0;
  let bytes = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: Math.min(parallel, files.length) }, async () => {
      const buffer = Buffer.allocUnsafe(1024 * 1024);
      while (next < files.length && !signal?.aborted) {
        const file = files[next++];
        try {
          const read = await readThrough(file.path, buffer);
          bytes += read;
        } catch (err) {
          failed.push({ path: file.path, error: (err as Error).message });
        }
        done++;
        options.onProgress?.({ files: done, bytes, totalFiles, totalBytes });
      }
    }),
  );
  const seconds = (now() - started) / 1000;
  return {
    files: done - failed.length,
    bytes,
    totalFiles,
    totalBytes,
    seconds,
    megabytesPerSecond: seconds > 0 ? bytes / 1e6 / seconds : 0,
    complete: !signal?.aborted,
    failed,
  };
}
