/**
 * `mountfleet shard verify`: reads the shards back and checks the round trip. Every shard is streamed
 * through tar-stream's extractor (an implementation independent of our writer): member names, sizes
 * and sha256 must match the manifest, in order, and the shard's own sha256 and length must match
 * shards.json. A sample of manifest offsets is checked with ranged GETs (the random access a reader
 * relies on), and the source is compared with the manifest: by listing (keys, sizes, ETags), or by
 * re-reading every object's content.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { listSource, manifestKey, summaryKey, type ManifestEntry, type ShardSummary } from './layout';

export type SourceCheck = 'none' | 'listing' | 'content';

interface VerifyOptions {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly destPrefix: string;
  /** @default 'listing' */
  readonly source?: SourceCheck;
  /** Manifest entries checked with a ranged GET at their offset, spread evenly. @default 20 */
  readonly rangeChecks?: number;
}

export interface VerifyResult {
  readonly ok: boolean;
  readonly shards: number;
  readonly objects: number;
  readonly bytes: number;
  readonly rangeChecked: number;
  readonly sourceChecked: SourceCheck;
  readonly problems: readonly string[];
}

async function getText(s3: S3Client, bucket: string, key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (res.Body as { transformToString(): Promise<string> }).transformToString();
}

async function sha256Of(body: AsyncIterable<unknown>): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of body) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** Streams one shard through the tar extractor, comparing each member with the manifest. */
async function verifyShard(
  s3: S3Client,
  bucket: string,
  shard: ShardSummary['shards'][number],
  expected: readonly ManifestEntry[],
  sourcePrefix: string,
  problems: string[],
): Promise<number> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: shard.key }));
  const body = res.Body as Readable;
  const whole = createHash('sha256');
  let length = 0;
  body.on('data', (chunk: Buffer) => {
    whole.update(chunk);
    length += chunk.length;
  });
  const tar = extract();
  body.pipe(tar);
  let index = 0;
  for await (const entry of tar) {
    const want = expected[index++];
    const got = await sha256Of(entry);
    if (!want) {
      problems.push(`${shard.key}: unexpected member ${entry.header.name}`);
      continue;
    }
    const name = want.key.slice(sourcePrefix.length);
    if (entry.header.name !== name)
      problems.push(`${shard.key}: member ${index} is ${entry.header.name}, manifest says ${name}`);
    if (got.size !== want.size)
      problems.push(`${shard.key}: ${name} has ${got.size} bytes, manifest says ${want.size}`);
    if (got.sha256 !== want.sha256) problems.push(`${shard.key}: ${name} sha256 differs from the manifest`);
  }
  if (index < expected.length) problems.push(`${shard.key}: ${expected.length - index} members missing`);
  if (length !== shard.bytes) problems.push(`${shard.key}: ${length} bytes, shards.json says ${shard.bytes}`);
  if (whole.digest('hex') !== shard.sha256) problems.push(`${shard.key}: sha256 differs from shards.json`);
  return index;
}

export async function verifyShards(options: VerifyOptions): Promise<VerifyResult> {
  const { s3, bucket, destPrefix } = options;
  const source = options.source ?? 'listing';
  const summary = JSON.parse(await getText(s3, bucket, summaryKey(destPrefix))) as ShardSummary;
  const manifest = (await getText(s3, bucket, manifestKey(destPrefix)))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ManifestEntry);
  const problems: string[] = [];

  const byShard = new Map<string, ManifestEntry[]>();
  for (const e of manifest) byShard.set(e.shard, [...(byShard.get(e.shard) ?? []), e]);
  for (const shard of summary.shards) {
    const members = byShard.get(shard.key) ?? [];
    if (members.length !== shard.objects) {
      problems.push(`${shard.key}: manifest lists ${members.length} objects, shards.json ${shard.objects}`);
    }
    try {
      await verifyShard(s3, bucket, shard, members, summary.source.prefix, problems);
    } catch (err) {
      problems.push(`${shard.key}: unreadable: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  // Ranged reads at the recorded offsets, spread over the whole manifest.
  const wanted = Math.min(options.rangeChecks ?? 20, manifest.length);
  const sample = Array.from(
    { length: wanted },
    (_, i) => manifest[Math.floor((i * manifest.length) / wanted)],
  );
  for (const e of sample.filter((s) => s.size > 0)) {
    const res = await s3.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: e.shard,
        Range: `bytes=${e.offset}-${e.offset + e.size - 1}`,
      }),
    );
    const got = await sha256Of(res.Body as Readable);
    if (got.sha256 !== e.sha256)
      problems.push(`${e.shard}@${e.offset}: ranged read of ${e.key} does not match`);
  }

  if (source !== 'none') {
    const exclude = summary.source.bucket === bucket ? destPrefix : undefined;
    const current = await listSource(s3, summary.source.bucket, summary.source.prefix, exclude);
    const listed = new Map(current.map((o) => [o.key, o]));
    for (const e of manifest) {
      const o = listed.get(e.key);
      if (!o) problems.push(`source ${e.key} is gone`);
      else if (o.size !== e.size || o.etag !== e.etag)
        problems.push(`source ${e.key} changed since sharding`);
      else if (source === 'content') {
        const res = await s3.send(new GetObjectCommand({ Bucket: summary.source.bucket, Key: e.key }));
        if ((await sha256Of(res.Body as Readable)).sha256 !== e.sha256)
          problems.push(`source ${e.key}: content differs`);
      }
      listed.delete(e.key);
    }
    for (const key of listed.keys()) problems.push(`source ${key} is not in any shard`);
  }

  return {
    ok: problems.length === 0,
    shards: summary.shards.length,
    objects: manifest.length,
    bytes: summary.shards.reduce((a, s) => a + s.bytes, 0),
    rangeChecked: sample.length,
    sourceChecked: source,
    problems,
  };
}
