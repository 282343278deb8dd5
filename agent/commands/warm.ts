/**
 * `mountfleet warm`: reads a data set through its mount before a job so Mountpoint's caches hold it (the
 * local cache of this instance; the shared Express cache of the whole zone). Logic in core/measure/warm.ts.
 */
import { resolve } from 'node:path';
import { parseWholeNumber } from '../args';
import { EXIT_STATUS, UsageError } from '../../core/common';
import type { RegisterCommand } from '../command';
import { interruptible } from '../stop-signals';
import { printJson, s3Phrase } from '../output';
import { agentS3Counter, s3CountBetween } from '../../core/agent';
import { agentPaths } from '../../core/contract';
import {
  mountCaches,
  SHARED_CACHE_MAX_OBJECT_BYTES,
  type MountCaches,
  filesToWarm,
  ManifestError,
  sizeFiles,
  warm,
  type WarmFile,
  type WarmProgress,
  checkDirectory,
  DataSetError,
} from '../../core/measure';

interface WarmFlags {
  path: string;
  manifest?: string;
  parallel: string;
  json?: boolean;
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;

/** What the user should know about the caches before the warm-up starts. */
function cacheNotes(path: string, caches: MountCaches | undefined, files: readonly WarmFile[]): string[] {
  if (!caches) return [`${path} is not on a FUSE mount: reading it fills no Mountpoint cache`];
  const notes: string[] = [];
  const total = files.reduce((a, f) => a + f.size, 0);
  if (caches.pid === undefined) {
    notes.push(
      `no Mountpoint process for ${caches.mountPoint} in this PID namespace: its caches are unknown (run warm where the mount was made)`,
    );
    return notes;
  }
  if (!caches.local && !caches.shared) {
    notes.push(
      `${caches.mountPoint} has no data cache (no --cache, no --cache-xz): a warm-up fills only the metadata cache; the job reads the data from S3 again`,
    );
  }
  const limit = caches.local?.maxBytes;
  if (caches.local && limit !== undefined && total > limit) {
    notes.push(
      `the data set (${gb(total)}) is larger than the local cache of ${caches.mountPoint} (${gb(limit)}, from ${caches.local.limitFrom === 'max-cache-size' ? '--max-cache-size' : 'the free space of ' + caches.local.directory}): ` +
        'the first files warmed are evicted before the job reads them; warm a part (--manifest) or give the cache more room',
    );
  }
  if (caches.shared) {
    notes.push(
      `${caches.mountPoint} has the shared Express cache ${caches.shared.bucket}: this warm-up serves every instance of the zone`,
    );
    const large = files.filter((f) => f.size > SHARED_CACHE_MAX_OBJECT_BYTES).length;
    if (large > 0)
      notes.push(
        `${large} files are larger than 1 MiB and bypass the shared cache (Mountpoint caches objects up to 1 MiB there)`,
      );
  } else {
    notes.push(`${caches.mountPoint} has no shared Express cache: only this instance is warmed`);
  }
  return notes;
}

/** A progress line on stderr: rewritten in place on a terminal, every 5 s otherwise. */
function progressPrinter(): { update: (p: WarmProgress) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  const every = tty ? 200 : 5000;
  let last = 0;
  let shown = false;
  const line = (p: WarmProgress) =>
    `warm: ${p.files}/${p.totalFiles} files, ${(p.bytes / 1e6).toFixed(1)}/${(p.totalBytes / 1e6).toFixed(1)} MB`;
  return {
    update: (p) => {
      const t = Date.now();
      if (t - last < every && p.files < p.totalFiles) return;
      last = t;
      shown = true;
      process.stderr.write(tty ? `\r${line(p)}` : `${line(p)}\n`);
    },
    end: () => {
      if (tty && shown) process.stderr.write('\n');
    },
  };
}

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('warm')
    .description(
      "fill a mount's caches before a job: read every file under --path (or those --manifest lists) through the mount, " +
        'in parallel; says whether the shared Express cache makes it serve the whole zone',
    )
    .requiredOption('--path <dir>', 'the mounted data set')
    .option('--manifest <file>', 'warm only these files: one path a line, relative to --path')
    .option('--parallel <n>', 'files read at once', '16')
    .option('--json', 'print the result as one JSON document')
    .action(async (flags: WarmFlags) => {
      const parallel = parseWholeNumber('--parallel', flags.parallel, { min: 1, max: 1024 });
      const path = resolve(flags.path);
      // The same checks as bench train: exists, a directory, still mounted.
      await checkDirectory(path).catch((err: unknown) => {
        throw err instanceof DataSetError ? new UsageError(`--path: ${err.message}`) : err;
      });
      const paths = await filesToWarm(path, flags.manifest).catch((err: unknown) => {
        throw err instanceof ManifestError ? new UsageError(`--manifest: ${err.message}`) : err;
      });
      if (paths.length === 0) {
        throw new UsageError(
          flags.manifest ? `--manifest: ${flags.manifest} lists no files` : `--path: no files under ${path}`,
        );
      }
      // Counted from the files' look-ups on (the listing is left out, so bad input is refused at once).
      const s3 = agentS3Counter(path, agentPaths().runDir, (reason) =>
        process.stderr.write(`warm: S3 requests not counted: ${reason}\n`),
      );
      const s3Before = await s3.read();
      const files = await sizeFiles(paths, parallel).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        throw new UsageError(
          `${flags.manifest ? '--manifest' : '--path'}: ${err.path ?? 'a file'} does not exist`,
        );
      });
      const caches = mountCaches(path);
      const notes = cacheNotes(path, caches, files);
      for (const note of notes) process.stderr.write(`warm: ${note}\n`);

      const progress = progressPrinter();
      const result = await interruptible('\nmountfleet warm: stopping; what is read stays cached', (signal) =>
        warm({ files, parallel, signal, onProgress: progress.update }).finally(progress.end),
      );
      for (const f of result.failed) process.stderr.write(`warm: ${f.path}: ${f.error}\n`);
      const s3After = s3Before && result.complete ? await s3.read() : undefined;
      const s3Count = s3Before && s3After ? s3CountBetween(s3Before, s3After) : undefined;
      if (flags.json) {
        printJson({
          path,
          ...result,
          ...(s3Count ? { s3: s3Count } : {}),
          s3Counts: s3.source,
          ...(caches ? { mount: caches } : {}),
          notes,
        });
      } else {
        process.stdout.write(
          `warmed ${result.files} files, ${(result.bytes / 1e6).toFixed(1)} MB in ${result.seconds.toFixed(1)} s ` +
            `(${result.megabytesPerSecond.toFixed(1)} MB/s)` +
            (s3Count ? `, ${s3Phrase(s3Count)}` : '') +
            (result.failed.length ? `; ${result.failed.length} failed` : '') +
            (result.complete ? '' : `; stopped after ${result.files} of ${result.totalFiles}`) +
            '\n',
        );
      }
      ctx.exitCode = !result.complete ? EXIT_STATUS.interrupted : result.failed.length > 0 ? 1 : 0;
    });
};
