/**
 * What sharding writes where, and which object goes into which shard.
 *
 * Layout under the destination prefix:
 *   shard-000000.tar ...          the shards (members named by key relative to the source prefix)
 *   _progress/shard-000000.json   one record per finished shard: its members, offsets, checksums
 *   manifest.jsonl                one line per object: key, shard, data offset, size, sha256
 *   shards.json                   the shards: key, size, sha256, ETag, member count, source, target size
 *
 * The grouping is a pure function of the listing and the target size, which is what makes a re-run resume.
 */
import { paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { END_OF_ARCHIVE, memberLength } from './tar';

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

/** What `_progress/shard-NNNNNN.json` holds: one finished shard, its members and where they are. */
export interface ProgressRecord {
  readonly shard: ShardRecord;
  readonly entries: readonly ManifestEntry[];
}

export interface ShardSummary {
  readonly source: { readonly bucket: string; readonly prefix: string };
  readonly dest: { readonly bucket: string; readonly prefix: string };
  readonly targetBytes: number;
  readonly shards: readonly ShardRecord[];
}

export const shardKey = (destPrefix: string, index: number) =>
  `${destPrefix}shard-${String(index).padStart(6, '0')}.tar`;
export const progressKey = (destPrefix: string, index: number) =>
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

/** A source object as a tar member: named by its key relative to the source prefix. */
export const memberOf = (o: SourceObject, prefix: string) => ({
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
