/**
 * PUT and GET latency by object size for one or more buckets (a Standard bucket and an Express
 * directory bucket, typically). Each request is timed from send to the last byte of the response body,
 * one at a time on a warm connection, and summarized as p50/p90/p99 and mean.
 */
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { summarize, type Summary } from './stats';

/** 1 B to 100 MB in x10 steps. */
const LATENCY_SIZES: readonly number[] = Array.from({ length: 9 }, (_, i) => 10 ** i);

export interface LatencyTarget {
  /** Shown in the CSV and the plot, e.g. `standard` or `express`. */
  readonly label: string;
  readonly bucket: string;
  readonly client: S3Client;
}

export interface LatencyRow extends Summary {
  readonly target: string;
  readonly op: 'PUT' | 'GET';
  readonly sizeBytes: number;
}

interface LatencyOptions {
  readonly targets: readonly LatencyTarget[];
  readonly sizes?: readonly number[];
  /** Timed requests per size and operation. @default 10 */
  readonly runs?: number;
  /** Key prefix for the test objects (deleted afterwards). @default 'mountfleet-bench/' */
  readonly keyPrefix?: string;
  /** Milliseconds, high resolution. @default performance.now */
  readonly now?: () => number;
  readonly onRow?: (row: LatencyRow) => void;
}

export function sizesUpTo(maxBytes: number): number[] {
  return LATENCY_SIZES.filter((s) => s <= maxBytes);
}

async function timed(now: () => number, call: () => Promise<unknown>): Promise<number> {
  const start = now();
  await call();
  return now() - start;
}

export async function measureLatency(options: LatencyOptions): Promise<LatencyRow[]> {
  const sizes = options.sizes ?? LATENCY_SIZES;
  const runs = options.runs ?? 10;
  const prefix = options.keyPrefix ?? 'mountfleet-bench/';
  const now = options.now ?? (() => performance.now());
  const rows: LatencyRow[] = [];
  for (const target of options.targets) {
    const { client, bucket } = target;
    const keys: string[] = [];
    const put = (key: string, body: Buffer) =>
      client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const get = async (key: string) => {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return res.Body?.transformToByteArray();
    };
    try {
      // Warm the connection (and, on AWS, the directory bucket's session) before timing anything.
      const warmKey = `${prefix}warm-up`;
      keys.push(warmKey);
      await put(warmKey, Buffer.from('x'));
      await get(warmKey);
      for (const size of sizes) {
        const body = randomBytes(size);
        const putMs: number[] = [];
        const getMs: number[] = [];
        for (let run = 0; run < runs; run++) {
          const key = `${prefix}${size}/${run}`;
          keys.push(key);
          putMs.push(await timed(now, () => put(key, body)));
          getMs.push(await timed(now, () => get(key)));
        }
        for (const [op, samples] of [
          ['PUT', putMs],
          ['GET', getMs],
        ] as const) {
          const row: LatencyRow = { target: target.label, op, sizeBytes: size, ...summarize(samples) };
          rows.push(row);
          options.onRow?.(row);
        }
      }
    } finally {
      for (let i = 0; i < keys.length; i += 1000) {
        await client
          .send(
            new DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
            }),
          )
          .catch(() => undefined);
      }
    }
  }
  return rows;
}

const CSV_HEADER = 'target,op,size_bytes,runs,p50_ms,p90_ms,p99_ms,mean_ms,min_ms,max_ms';

export function latencyCsv(rows: readonly LatencyRow[]): string {
  const ms = (n: number) => n.toFixed(3);
  return (
    [
      CSV_HEADER,
      ...rows.map((r) =>
        [
          r.target,
          r.op,
          r.sizeBytes,
          r.count,
          ms(r.p50),
          ms(r.p90),
          ms(r.p99),
          ms(r.mean),
          ms(r.min),
          ms(r.max),
        ].join(','),
      ),
    ].join('\n') + '\n'
  );
}
