/**
 * Writing one shard: its members streamed from the source into a multipart Upload as a tar, small objects
 * read ahead in parallel (bounded), large ones streamed in turn, so memory never holds a whole shard.
 */
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { memberOf, type ManifestEntry, type PlannedShard, type ProgressRecord } from './layout';
import { END_OF_ARCHIVE, memberHeader, padding } from './tar';

/** Where a shard is read from and written to, and how hard to push. */
export interface ShardWriteOptions {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  readonly destBucket: string;
  /** Objects read ahead in parallel. */
  readonly concurrency: number;
  /** Objects up to this size are read ahead into memory; larger ones are streamed in turn. */
  readonly readAheadMaxBytes: number;
  /** Multipart part size. */
  readonly partSize: number;
  /** Aborts the shard in flight. */
  readonly signal?: AbortSignal;
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

export async function writeShard(o: ShardWriteOptions, planned: PlannedShard): Promise<ProgressRecord> {
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
