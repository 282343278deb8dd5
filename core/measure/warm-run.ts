/**
 * `mountfleet warm` from request to report: checks the path and the files to warm (refusing bad input before
 * anything is read, exit 2), says what the mount's caches will make of the warm-up, reads the files through
 * the mount (warm.ts) and counts the S3 requests that took, from the agent's mount that serves the path.
 */
import { type S3Count, type S3CountSource, agentS3Counter, s3CountBetween } from '../agent';
import { UsageError } from '../common';
import { type MountCaches, SHARED_CACHE_MAX_OBJECT_BYTES, mountCaches } from './mount-caches';
import { checkDirectory } from './train-data';
import { type WarmFile, type WarmProgress, type WarmResult, filesToWarm, sizeFiles, warm } from './warm';

/** What `warm` was asked to do (its flags, read). */
export interface WarmRequest {
  /** An absolute path. */
  readonly path: string;
  /** Warm only the files this file lists. */
  readonly manifest?: string;
  /** Files read at once. */
  readonly parallel: number;
  /** The agent's run dir, where its state (and so the S3 counts of its mounts) is. */
  readonly runDir: string;
}

interface WarmHooks {
  /** Why S3 requests are not counted (once). */
  readonly onS3NotCounted: (reason: string) => void;
  /** What the user should know about the caches, before the reading starts. */
  readonly onNotes: (notes: readonly string[]) => void;
  readonly onProgress: (progress: WarmProgress) => void;
  /** A file that could not be read, once the reading is over (the others were read). */
  readonly onFailed: (file: { readonly path: string; readonly error: string }) => void;
  /** Runs the reading with a signal that a stop (SIGINT, SIGTERM) aborts; what is read stays cached. */
  readonly stoppable: <T>(read: (signal: AbortSignal) => Promise<T>) => Promise<T>;
}

/** The `--json` document: the warm-up's figures, its S3 requests when counted, the mount's caches. */
export interface WarmReport extends WarmResult {
  readonly path: string;
  readonly s3?: S3Count;
  readonly s3Counts: S3CountSource;
  readonly mount?: MountCaches;
  readonly notes: readonly string[];
}

/** Warms the request's files; bad input (path, manifest, a listed file missing) is a UsageError. */
export async function warmPath(request: WarmRequest, hooks: WarmHooks): Promise<WarmReport> {
  const { path, manifest, parallel } = request;
  // The same checks as bench train: exists, a directory, still mounted.
  await checkDirectory(path);
  const paths = await filesToWarm(path, manifest);
  if (paths.length === 0) {
    throw new UsageError(
      manifest ? `--manifest: ${manifest} lists no files` : `--path: no files under ${path}`,
    );
  }
  // Counted from the files' look-ups on (the listing is left out, so bad input is refused at once).
  const s3 = agentS3Counter(path, request.runDir, hooks.onS3NotCounted);
  const s3Before = await s3.read();
  const files = await sizeFiles(paths, parallel).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    throw new UsageError(`${manifest ? '--manifest' : '--path'}: ${err.path ?? 'a file'} does not exist`);
  });
  const caches = mountCaches(path);
  const notes = cacheNotes(path, caches, files);
  hooks.onNotes(notes);
  const result = await hooks.stoppable((signal) =>
    warm({ files, parallel, signal, onProgress: hooks.onProgress }),
  );
  for (const f of result.failed) hooks.onFailed(f);
  const s3After = s3Before && result.complete ? await s3.read() : undefined;
  const s3Count = s3Before && s3After ? s3CountBetween(s3Before, s3After) : undefined;
  return {
    path,
    ...result,
    ...(s3Count ? { s3: s3Count } : {}),
    s3Counts: s3.source,
    ...(caches ? { mount: caches } : {}),
    notes,
  };
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;

/** What the user should know about the caches before the warm-up starts. */
function cacheNotes(path: string, caches: MountCaches | undefined, files: readonly WarmFile[]): string[] {
  if (!caches) return [`${path} is not on a FUSE mount: reading it fills no Mountpoint cache`];
  if (caches.pid === undefined) {
    return [
      `no Mountpoint process for ${caches.mountPoint} in this PID namespace: its caches are unknown (run warm where the mount was made)`,
    ];
  }
  const notes: string[] = [];
  if (!caches.local && !caches.shared) {
    notes.push(
      `${caches.mountPoint} has no data cache (no --cache, no --cache-xz): a warm-up fills only the metadata cache; the job reads the data from S3 again`,
    );
  }
  const total = files.reduce((a, f) => a + f.size, 0);
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
