/**
 * Writing one shard: its members streamed from the source into a multipart Upload as a tar, small objects
 * read ahead in parallel (bounded), large ones streamed in turn, so memory never holds a whole shard.
 */
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import {
  memberOf,
  type ManifestEntry,
  type PlannedShard,
  type ProgressRecord,
  type SourceObject,
} from './layout';
import { END_OF_ARCHIVE, memberHeader, padding } from './tar';

/** Where a shard is read from and written to, and how hard to push. */
interface ShardWriteOptions {
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

/** Streams the planned shard's members into its object; resolves to its progress record once it is stored. */
export async function writeShard(o: ShardWriteOptions, planned: PlannedShard): Promise<ProgressRecord> {
  const upload = new ShardUpload(o, planned.key);
  try {
    const readAhead = new ReadAhead(o, planned.members);
    const entries: ManifestEntry[] = [];
    for (let i = 0; i < planned.members.length; i++) {
      readAhead.startFrom(i);
      const header = memberHeader(memberOf(planned.members[i], o.prefix));
      await upload.send(header);
      entries.push(await writeMember(upload, planned, planned.members[i], readAhead.take(i)));
    }
    const shard = await upload.finish(planned);
    return { shard: { ...shard, objects: entries.length }, entries };
  } catch (err) {
    await upload.abort();
    throw err;
  } finally {
    upload.dispose();
  }
}

/** One member's data and padding; its manifest entry (its data's offset in the shard, size and sha256). */
async function writeMember(
  upload: ShardUpload,
  planned: PlannedShard,
  m: SourceObject,
  body: Promise<Buffer | Readable>,
): Promise<ManifestEntry> {
  const offset = upload.offset;
  const hash = createHash('sha256');
  let size = 0;
  const data = await body;
  for await (const chunk of Buffer.isBuffer(data) ? [data] : data) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
    await upload.send(chunk as Buffer);
  }
  if (size !== m.size)
    throw new Error(
      `s3://${upload.bucket}/${m.key} changed while sharding (${size} bytes, listed ${m.size})`,
    );
  await upload.send(padding(size));
  return { key: m.key, shard: planned.key, offset, size, sha256: hash.digest('hex'), etag: m.etag };
}

/** The shard's multipart upload, fed as one stream: every byte sent is counted and hashed. */
class ShardUpload {
  readonly bucket: string;
  /** Bytes sent so far: where the next one goes in the shard. */
  offset = 0;
  private readonly out = new PassThrough({ highWaterMark: 1024 * 1024 });
  private readonly hash = createHash('sha256');
  private readonly upload: Upload;
  private readonly uploaded: Promise<unknown>;
  private readonly onAbort = () => void this.upload.abort();

  constructor(
    private readonly o: ShardWriteOptions,
    private readonly key: string,
  ) {
    this.bucket = o.bucket;
    this.upload = new Upload({
      client: o.s3,
      params: { Bucket: o.destBucket, Key: key, Body: this.out, ContentType: 'application/x-tar' },
      partSize: o.partSize,
      queueSize: 4,
      leavePartsOnError: false,
    });
    o.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.uploaded = this.upload.done();
    // Keep a failed upload from surfacing as an unhandled rejection while members are still being read.
    this.uploaded.catch(() => undefined);
  }

  /** Writes `chunk`, waiting when the stream asks for it (backpressure). */
  async send(chunk: Buffer): Promise<void> {
    this.hash.update(chunk);
    this.offset += chunk.length;
    if (!this.out.write(chunk)) await new Promise<void>((resolve) => this.out.once('drain', resolve));
  }

  /** Ends the tar and the upload; checks the length planned, sent and stored, and records the stored ETag. */
  async finish(planned: PlannedShard): Promise<{ key: string; bytes: number; sha256: string; etag: string }> {
    await this.send(END_OF_ARCHIVE);
    this.out.end();
    await this.uploaded;
    if (this.offset !== planned.bytes)
      throw new Error(`shard ${this.key}: wrote ${this.offset} bytes, planned ${planned.bytes}`);
    // Record what a later HEAD will answer (a resume compares against it), and check the stored length:
    // some S3-compatible servers report a different multipart ETag on completion than on HEAD.
    const head = await this.o.s3.send(new HeadObjectCommand({ Bucket: this.o.destBucket, Key: this.key }));
    if (head.ContentLength !== this.offset) {
      throw new Error(`shard ${this.key}: stored ${head.ContentLength} bytes, wrote ${this.offset}`);
    }
    return { key: this.key, bytes: this.offset, sha256: this.hash.digest('hex'), etag: head.ETag ?? '' };
  }

  async abort(): Promise<void> {
    this.out.destroy();
    await this.upload.abort().catch(() => undefined);
  }

  dispose(): void {
    this.o.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** Small members fetched ahead, `concurrency` at a time; large ones streamed when their turn comes. */
class ReadAhead {
  private readonly fetches = new Map<number, Promise<Buffer>>();

  constructor(
    private readonly o: ShardWriteOptions,
    private readonly members: readonly SourceObject[],
  ) {}

  /** Starts fetching the small members among the next `concurrency`, from member `i` on. */
  startFrom(i: number): void {
    for (let j = i; j < i + this.o.concurrency; j++) {
      const m = this.members[j];
      if (!m || this.fetches.has(j) || m.size > this.o.readAheadMaxBytes) continue;
      const fetched = this.get(m.key).then(readAll);
      fetched.catch(() => undefined);
      this.fetches.set(j, fetched);
    }
  }

  /** Member `i`'s body: fetched ahead, or a stream started now. */
  take(i: number): Promise<Buffer | Readable> {
    const prefetched = this.fetches.get(i);
    this.fetches.delete(i);
    return prefetched ?? this.get(this.members[i].key);
  }

  private async get(key: string): Promise<Readable> {
    const { s3, bucket, signal } = this.o;
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal });
    return res.Body as Readable;
  }
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
