/**
 * The data set `bench train` reads under a mounted path: one sample per file (an image folder), or the
 * members of the TAR shards `mountfleet shard` writes, each shard read from start to end as WebDataset does.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { UsageError } from '../common';
import { listFilePaths } from './read';
import { summaryKey, type ShardSummary } from '../shard';

export type SampleFormat = 'files' | 'tar';

interface TarShard {
  readonly path: string;
  /** Members (samples), from shards.json. */
  readonly samples: number;
}

export type DataSet =
  | {
      readonly format: 'files';
      readonly path: string;
      readonly files: readonly string[];
      readonly samples: number;
    }
  | {
      readonly format: 'tar';
      readonly path: string;
      readonly shards: readonly TarShard[];
      readonly samples: number;
    };

/** The path holds no usable data set: bad input, reported before anything is read (exit 2, naming --path). */
const dataSetError = (problem: string) => new UsageError(`--path: ${problem}`);

/** A readable message for a failed stat, naming what to check. */
function pathProblem(path: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return `${path} does not exist`;
  if (err.code === 'ENOTCONN')
    return `${path} is not mounted any more (its Mountpoint process is gone: "Transport endpoint is not connected"); remount it (mountfleet up) and run again`;
  return `${path}: ${err.message}`;
}

/** Throws a UsageError naming --path unless `path` is a directory that answers (a dead mount does not). */
export async function checkDirectory(path: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (err) {
    throw dataSetError(pathProblem(path, err as NodeJS.ErrnoException));
  }
  if (!isDirectory) throw dataSetError(`${path} is not a directory`);
}

/**
 * Finds the samples under `path`: every regular file for `files`; for `tar`, the shards listed in
 * `path/shards.json` (what `mountfleet shard` writes under its --dest-prefix). `limit` keeps the first
 * samples in path order (for tar: whole shards in order, until at least `limit` samples are in).
 */
export async function findDataSet(path: string, format: SampleFormat, limit?: number): Promise<DataSet> {
  await checkDirectory(path);
  if (format === 'files') {
    const files = (await listFilePaths(path)).slice(0, limit);
    return { format, path, files, samples: files.length };
  }
  const summaryFile = join(path, summaryKey(''));
  let summary: ShardSummary;
  try {
    summary = JSON.parse(await readFile(summaryFile, 'utf8')) as ShardSummary;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw dataSetError(
      code === 'ENOENT'
        ? `${summaryFile} not found: --sample-format tar reads the shards \`mountfleet shard\` writes; point --path at the directory of its --dest-prefix (where shards.json is)`
        : `${summaryFile} is not a shards.json \`mountfleet shard\` wrote: ${(err as Error).message}`,
    );
  }
  const shards: TarShard[] = [];
  let samples = 0;
  for (const s of summary.shards ?? []) {
    if (limit !== undefined && samples >= limit) break;
    shards.push({ path: join(path, s.key.slice(summary.dest.prefix.length)), samples: s.objects });
    samples += s.objects;
  }
  return { format, path, shards, samples };
}

/** What reading a shard reports, as it happens. */
interface ShardReader {
  /** Each member's size, after its bytes are read; awaited before reading on (a full queue holds the reader). */
  readonly onSample: (bytes: number) => Promise<void>;
  /** Bytes read from the file: members, headers and padding. */
  readonly onBytes: (bytes: number) => void;
  readonly signal?: AbortSignal;
}

async function* counted(chunks: AsyncIterable<Buffer>, onBytes: (bytes: number) => void) {
  for await (const chunk of chunks) {
    onBytes(chunk.length);
    yield chunk;
  }
}

/**
 * Parses one shard from start to end, member by member, from its bytes in order (a ReadThread's chunks);
 * returns once the source is closed, so that its reader is free for the next shard.
 */
export async function readShard(chunks: AsyncIterable<Buffer>, reader: ShardReader): Promise<void> {
  const source = Readable.from(counted(chunks, reader.onBytes), {
    objectMode: false,
    ...(reader.signal ? { signal: reader.signal } : {}),
  });
  const tar = extract();
  source.on('error', (err) => tar.destroy(err));
  source.pipe(tar);
  try {
    for await (const entry of tar) {
      let size = 0;
      for await (const chunk of entry) size += (chunk as Buffer).length;
      await reader.onSample(size);
    }
  } finally {
    source.destroy();
    if (!source.closed) await new Promise((resolve) => source.once('close', resolve));
  }
}
