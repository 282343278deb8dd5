/**
 * Packs the small objects under an S3 prefix into large TAR shards, so a training job reads a few big
 * sequential objects instead of thousands of small ones (the seed: ~10 requests instead of 16,000 a
 * minute, GPUs at 100%).
 *
 * Layout under the destination prefix:
 *   shard-000000.tar ...          the shards (members named by key relative to the source prefix)
 *   _progress/shard-000000.json   one record per finished shard: its members, offsets, checksums
 *   manifest.jsonl                one line per object: key, shard, data offset, size, sha256
 *   shards.json                   the shards: key, size, sha256, ETag, member count, source, target size
 *
 * Streaming: a shard is written to a multipart Upload through a stream as its members are read, so
 * memory holds at most the Upload's parts in flight plus a bounded read-ahead of small objects, never
 * a whole shard. Resumable: the grouping of objects into shards is a pure function of the listing and
 * the target size; a re-run skips every shard whose progress record matches its planned members and
 * whose object still has the recorded size and ETag.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { END_OF_ARCHIVE, memberHeader, memberLength, padding } from './tar';

export interface SourceObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  /** Seconds since the epoch. */
  readonly mtime: number;
}

export interface PlannedShard {
  readonly index: number;
  readonly key: string;
  readonly members: readonly SourceObject[];
  /** Exact length of the tar. */
  readonly bytes: number;
}

export interface ManifestEntry {
  readonly key: string;
  readonly shard: string;
  /** Byte offset of the object's data inside the shard: a ranged GET of [offset, offset+size) returns it. */
  readonly offset: number;
  readonly size: number;
  readonly sha256: string;
  readonly etag: string;
}

export interface ShardRecord {
  readonly key: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly etag: string;
  readonly objects: number;
}

interface ProgressRecord {
  readonly shard: ShardRecord;
  readonly entries: readonly ManifestEntry[];
}

export interface ShardSummary {
  readonly source: { readonly bucket: string; readonly prefix: string };
  readonly dest: { readonly bucket: string; readonly prefix: string };
  readonly targetBytes: number;
  readonly shards: readonly ShardRecord[];
}

export interface ShardResult extends ShardSummary {
  readonly objects: number;
  readonly bytes: number;
  /** Shards written by this run (the others were already done and verified). */
  readonly written: number;
  readonly skipped: number;
  readonly seconds: number;
}

export interface ShardOptions {
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

export const shardKey = (destPrefix: string, index: number) =>
  `${destPrefix}shard-${String(index).padStart(6, '0')}.tar`;
const progressKey = (destPrefix: string, index: number) =>
  `${destPrefix}_progress/shard-${String(index).padStart(6, '0')}.json`;
export const manifestKey = (destPrefix: string) => `${destPrefix}manifest.jsonl`;
export const summaryKey = (destPrefix: string) => `${destPrefix}shards.json`;

/** Lists the source objects in key order, leaving out the destination prefix when it lies inside the source. */
export async function listSource(
  s3: S3Client,
  bucket: string,
  prefix: string,
  exclude?: string,
): Promise<SourceObject[]> {
  const objects: SourceObject[] = [];
  for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket: bucket, Prefix: prefix })) {
    for (const o of page.Contents ?? []) {
      if (!o.Key || o.Key.endsWith('/') || (exclude && o.Key.startsWith(exclude))) continue;
      objects.push({
        key: o.Key,
        size: o.Size ?? 0,
        etag: o.ETag ?? '',
        mtime: Math.floor((o.LastModified?.getTime() ?? 0) / 1000),
      });
    }
  }
  return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const memberOf = (o: SourceObject, prefix: string) => ({
  name: o.key.slice(prefix.length),
  size: o.size,
  mtime: o.mtime,
});

/**
 * Groups objects, in key order, into shards of at most `targetBytes` of tar (an object larger than the
 * target gets a shard of its own). Deterministic, which is what makes a re-run resume.
 */
export function planShards(
  objects: readonly SourceObject[],
  prefix: string,
  destPrefix: string,
  targetBytes: number,
): PlannedShard[] {
  const shards: PlannedShard[] = [];
  let members: SourceObject[] = [];
  let bytes = END_OF_ARCHIVE.length;
  const close = () => {
    if (members.length === 0) return;
    shards.push({ index: shards.length, key: shardKey(destPrefix, shards.length), members, bytes });
    members = [];
    bytes = END_OF_ARCHIVE.length;
  };
  for (const o of objects) {
    const length = memberLength(memberOf(o, prefix));
    if (members.length > 0 && bytes + length > targetBytes) close();
    members.push(o);
    bytes += length;
  }
  close();
  return shards;
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

/** Writes `chunk` to `out`, waiting when the stream asks for it (backpressure). */
async function write(out: PassThrough, chunk: Buffer): Promise<void> {
  if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

async function getBody(s3: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<Readable> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
  return res.Body as Readable;
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function writeShard(
  o: Required<Pick<ShardOptions, 'concurrency' | 'readAheadMaxBytes' | 'partSize'>> &
    ShardOptions & { destBucket: string },
  planned: PlannedShard,
): Promise<ProgressRecord> {
  const { s3, bucket, prefix, signal } = o;
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  const shardHash = createHash('sha256');
  const upload = new Upload({
    client: s3,
    params: { Bucket: o.destBucket, Key: planned.key, Body: out, ContentType: 'application/x-tar' },
    partSize: o.partSize,
    queueSize: 4,
    leavePartsOnError: false,
  });
  const onAbort = () => void upload.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const uploaded = upload.done();
  // Keep a failed upload from surfacing as an unhandled rejection while members are still being read.
  uploaded.catch(() => undefined);

  // Read ahead: small objects are fetched in parallel (bounded), large ones streamed when their turn comes.
  const fetches = new Map<number, Promise<Buffer>>();
  const fetchAt = (i: number) => {
    const m = planned.members[i];
    if (!m || fetches.has(i) || m.size > o.readAheadMaxBytes) return;
    const fetched = getBody(s3, bucket, m.key, signal).then(readAll);
    fetched.catch(() => undefined);
    fetches.set(i, fetched);
  };
  const send = async (chunk: Buffer) => {
    shardHash.update(chunk);
    await write(out, chunk);
  };

  const entries: ManifestEntry[] = [];
  let offset = 0;
  try {
    for (let i = 0; i < planned.members.length; i++) {
      for (let j = i; j < i + o.concurrency; j++) fetchAt(j);
      const m = planned.members[i];
      const header = memberHeader(memberOf(m, prefix));
      await send(header);
      offset += header.length;
      const hash = createHash('sha256');
      let size = 0;
      const prefetched = fetches.get(i);
      fetches.delete(i);
      const body = prefetched ? await prefetched : await getBody(s3, bucket, m.key, signal);
      if (Buffer.isBuffer(body)) {
        hash.update(body);
        size = body.length;
        await send(body);
      } else {
        for await (const chunk of body) {
          hash.update(chunk as Buffer);
          size += (chunk as Buffer).length;
          await send(chunk as Buffer);
        }
      }
      if (size !== m.size)
        throw new Error(`s3://${bucket}/${m.key} changed while sharding (${size} bytes, listed ${m.size})`);
      entries.push({
        key: m.key,
        shard: planned.key,
        offset,
        size,
        sha256: hash.digest('hex'),
        etag: m.etag,
      });
      const pad = padding(size);
      await send(pad);
      offset += size + pad.length;
    }
    await send(END_OF_ARCHIVE);
    out.end();
    await uploaded;
    offset += END_OF_ARCHIVE.length;
    if (offset !== planned.bytes)
      throw new Error(`shard ${planned.key}: wrote ${offset} bytes, planned ${planned.bytes}`);
    // Record what a later HEAD will answer (a resume compares against it), and check the stored length:
    // some S3-compatible servers report a different multipart ETag on completion than on HEAD.
    const head = await s3.send(new HeadObjectCommand({ Bucket: o.destBucket, Key: planned.key }));
    if (head.ContentLength !== offset) {
      throw new Error(`shard ${planned.key}: stored ${head.ContentLength} bytes, wrote ${offset}`);
    }
    const etag = head.ETag ?? '';
    return {
      shard: {
        key: planned.key,
        bytes: offset,
        sha256: shardHash.digest('hex'),
        etag,
        objects: entries.length,
      },
      entries,
    };
  } catch (err) {
    out.destroy();
    await upload.abort().catch(() => undefined);
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

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

  const records: ProgressRecord[] = [];
  let written = 0;
  let skipped = 0;
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

  const summary: ShardSummary = {
    source: { bucket: o.bucket, prefix: o.prefix },
    dest: { bucket: o.destBucket, prefix: o.destPrefix },
    targetBytes: o.targetBytes,
    shards: records.map((r) => r.shard),
  };
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
  return {
    ...summary,
    objects: objects.length,
    bytes: objects.reduce((a, b) => a + b.size, 0),
    written,
    skipped,
    seconds: (now() - started) / 1000,
  };
}
