/**
 * Packs the small objects under an S3 prefix into large TAR shards, so a training job reads a few big
 * sequential objects instead of thousands of small ones (in the public Mountpoint demo docs/training.md
 * reproduces: about 10 requests a minute instead of 16,000, and the GPU busy all the time).
 *
 * Layout under the destination prefix and the grouping into shards: layout.ts.
 *
 * Streaming: write-shard.ts. Resumable: the grouping of objects into shards is a pure function of the listing and
 * the target size; a re-run skips every shard whose progress record matches its planned members and
 * whose object still has the recorded size and ETag.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { setMaxListeners } from 'node:events';
import { EXIT_STATUS, MountfleetError } from '../common';
import {
  listSource,
  manifestKey,
  planShards,
  progressKey,
  summaryKey,
  type PlannedShard,
  type ProgressRecord,
  type ShardRecord,
  type ShardSummary,
} from './layout';
import { writeShard } from './write-shard';

export interface ShardResult extends ShardSummary {
  readonly objects: number;
  readonly bytes: number;
  /** Shards written by this run (the others were already done and verified). */
  readonly written: number;
  readonly skipped: number;
  readonly seconds: number;
}

interface ShardOptions {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  /** @default bucket */
  readonly destBucket?: string;
  readonly destPrefix: string;
  readonly targetBytes: number;
  /** Objects read ahead in parallel. @default 16 */
  readonly concurrency?: number;
  /** Objects up to this size are read ahead into memory; larger ones are streamed in turn. @default 8 MiB */
  readonly readAheadMaxBytes?: number;
  /** Multipart part size. @default 8 MiB */
  readonly partSize?: number;
  /** Stops between shards (and aborts the shard in flight); a later run resumes. */
  readonly signal?: AbortSignal;
  readonly onShard?: (shard: ShardRecord, done: { written: number; skipped: number; total: number }) => void;
  /** Milliseconds clock for the run's duration. @default Date.now */
  readonly now?: () => number;
}

async function readJson<T>(s3: S3Client, bucket: string, key: string): Promise<T | undefined> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return JSON.parse(await (res.Body as { transformToString(): Promise<string> }).transformToString()) as T;
  } catch (err) {
    if (err instanceof NoSuchKey || err instanceof NotFound) return undefined;
    throw err;
  }
}

/** True when the shard recorded in `progress` is the planned one and its object is still there, intact. */
async function alreadyDone(
  s3: S3Client,
  bucket: string,
  planned: PlannedShard,
  progress: ProgressRecord | undefined,
): Promise<boolean> {
  if (
    !progress ||
    progress.shard.bytes !== planned.bytes ||
    progress.entries.length !== planned.members.length
  ) {
    return false;
  }
  const sameMembers = planned.members.every((m, i) => {
    const e = progress.entries[i];
    return e.key === m.key && e.size === m.size && e.etag === m.etag;
  });
  if (!sameMembers) return false;
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: planned.key }));
    return head.ContentLength === progress.shard.bytes && head.ETag === progress.shard.etag;
  } catch (err) {
    if (err instanceof NotFound || err instanceof NoSuchKey) return false;
    throw err;
  }
}

/**
 * Packs the prefix into shards, then writes the manifest and the summary. Stopped by its signal, it throws a
 * MountfleetError with exit 130 saying how far it got: the finished shards are kept, and a re-run resumes.
 */
export async function shardPrefix(options: ShardOptions): Promise<ShardResult> {
  const o = {
    concurrency: 16,
    readAheadMaxBytes: 8 * 1024 * 1024,
    partSize: 8 * 1024 * 1024,
    ...options,
    destBucket: options.destBucket ?? options.bucket,
  };
  const now = o.now ?? Date.now;
  const started = now();
  // Every read-ahead GetObject listens on the signal: allow that many listeners without a leak warning.
  if (o.signal) setMaxListeners(o.concurrency + 8, o.signal);
  const exclude = o.destBucket === o.bucket ? o.destPrefix : undefined;
  const objects = await listSource(o.s3, o.bucket, o.prefix, exclude);
  const planned = planShards(objects, o.prefix, o.destPrefix, o.targetBytes);
  const { records, written, skipped } = await writeShards(o, planned);
  const summary: ShardSummary = {
    source: { bucket: o.bucket, prefix: o.prefix },
    dest: { bucket: o.destBucket, prefix: o.destPrefix },
    targetBytes: o.targetBytes,
    shards: records.map((r) => r.shard),
  };
  await writeIndex(o, summary, records);
  return {
    ...summary,
    objects: objects.length,
    bytes: objects.reduce((a, b) => a + b.size, 0),
    written,
    skipped,
    seconds: (now() - started) / 1000,
  };
}

/** The options with their defaults filled in. */
type ShardRun = ShardOptions &
  Required<Pick<ShardOptions, 'concurrency' | 'readAheadMaxBytes' | 'partSize' | 'destBucket'>>;

/** Each planned shard: skipped when already done and intact, else written and its progress recorded. */
async function writeShards(o: ShardRun, planned: readonly PlannedShard[]) {
  const records: ProgressRecord[] = [];
  let written = 0;
  let skipped = 0;
  try {
    for (const shard of planned) {
      o.signal?.throwIfAborted();
      const progress = await readJson<ProgressRecord>(
        o.s3,
        o.destBucket,
        progressKey(o.destPrefix, shard.index),
      );
      let record: ProgressRecord;
      if (progress && (await alreadyDone(o.s3, o.destBucket, shard, progress))) {
        record = progress;
        skipped++;
      } else {
        record = await writeShard(o, shard);
        await o.s3.send(
          new PutObjectCommand({
            Bucket: o.destBucket,
            Key: progressKey(o.destPrefix, shard.index),
            Body: JSON.stringify(record),
            ContentType: 'application/json',
          }),
        );
        written++;
      }
      records.push(record);
      o.onShard?.(record.shard, { written, skipped, total: planned.length });
    }
  } catch (err) {
    if (!o.signal?.aborted) throw err;
    throw new MountfleetError(
      `stopped (${String(o.signal.reason)}) with ${records.length} of ${planned.length} shards done; ` +
        'they are kept: run again to resume',
      EXIT_STATUS.interrupted,
      { cause: err },
    );
  }
  return { records, written, skipped };
}

/** The manifest (one line per object, in shard order) and the summary, once every shard is done. */
async function writeIndex(
  o: ShardRun,
  summary: ShardSummary,
  records: readonly ProgressRecord[],
): Promise<void> {
  const manifest = records.flatMap((r) => r.entries.map((e) => JSON.stringify(e))).join('\n');
  await o.s3.send(
    new PutObjectCommand({
      Bucket: o.destBucket,
      Key: manifestKey(o.destPrefix),
      Body: manifest ? `${manifest}\n` : '',
      ContentType: 'application/x-ndjson',
    }),
  );
  await o.s3.send(
    new PutObjectCommand({
      Bucket: o.destBucket,
      Key: summaryKey(o.destPrefix),
      Body: JSON.stringify(summary, null, 2),
      ContentType: 'application/json',
    }),
  );
}
