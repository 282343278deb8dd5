/**
 * `mountfleet bench latency` from request to results: clients for a Standard and an Express bucket (made
 * first when asked), PUT and GET latency by object size (latency.ts), and the rows as CSV and as an SVG chart.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { type LatencyRow, type LatencyTarget, latencyCsv, measureLatency } from './latency';
import { benchS3Client } from './s3-clients';
import { latencySvg } from './svg';

/** What `bench latency` was asked to measure (its flags, read). */
export interface LatencyBenchRequest {
  readonly standardBucket?: string;
  readonly expressBucket?: string;
  readonly sizes: readonly number[];
  /** Timed requests per size and operation. */
  readonly runs: number;
  /** Prefix of the test objects (deleted afterwards). */
  readonly keyPrefix: string;
  /** Create the buckets first (for emulators and scratch accounts). */
  readonly createBuckets: boolean;
}

interface LatencyBenchResult {
  readonly rows: readonly LatencyRow[];
  readonly csv: string;
  readonly svg: string;
}

/** Measures every size for each bucket given, one row at a time (`onRow`). */
export async function runLatencyBench(
  request: LatencyBenchRequest,
  onRow: (row: LatencyRow) => void,
): Promise<LatencyBenchResult> {
  const targets: LatencyTarget[] = [
    ...(request.standardBucket ? [{ label: 'standard', bucket: request.standardBucket }] : []),
    ...(request.expressBucket ? [{ label: 'express', bucket: request.expressBucket }] : []),
  ].map((t) => ({ ...t, client: benchS3Client(t.bucket) }));
  if (request.createBuckets) {
    for (const t of targets) await t.client.send(new CreateBucketCommand({ Bucket: t.bucket }));
  }
  const { sizes, runs, keyPrefix } = request;
  const rows = await measureLatency({ targets, sizes, runs, keyPrefix, onRow });
  const title = `S3 request latency by object size (${runs} runs per point; ${targets.map((t) => t.bucket).join(' vs ')})`;
  return { rows, csv: latencyCsv(rows), svg: latencySvg(rows, title) };
}
