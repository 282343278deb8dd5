/**
 * PUT/GET latency percentiles by object size against a local S3-compatible server (moto by default,
 * or whatever AWS_ENDPOINT_URL points at), for a Standard bucket and a directory-bucket name.
 *
 *   npx tsx bench/latency.ts            # 1 B .. 1 MB, 10 runs
 *   MAX_SIZE=100MB RUNS=5 npx tsx bench/latency.ts
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { latencyCsv, measureLatency, sizesUpTo } from '../core/measure/latency';
import { benchS3Client } from '../core/measure/s3-clients';
import { formatSize, latencySvg } from '../core/measure/svg';
import { parseBytes } from '../core/common/units';
import { withS3Endpoint } from './support';

const maxSize = parseBytes(process.env.MAX_SIZE ?? '1MB');
const runs = Number(process.env.RUNS ?? '10');

void withS3Endpoint(async (endpoint) => {
  const targets = [
    { label: 'standard', bucket: 'bench-standard' },
    { label: 'express', bucket: 'bench--use1-az4--x-s3' },
  ].map((t) => ({ ...t, client: benchS3Client(t.bucket) }));
  for (const t of targets)
    await t.client.send(new CreateBucketCommand({ Bucket: t.bucket })).catch(() => undefined);
  const rows = await measureLatency({ targets, sizes: sizesUpTo(maxSize), runs });
  console.log(`endpoint ${endpoint}, ${runs} runs per point (ms)`);
  console.log('target    op   size        p50      p90      p99     mean');
  for (const r of rows) {
    const ms = (n: number) => n.toFixed(2).padStart(8);
    console.log(
      `${r.target.padEnd(9)} ${r.op}  ${formatSize(r.sizeBytes).padEnd(7)} ${ms(r.p50)} ${ms(r.p90)} ${ms(r.p99)} ${ms(r.mean)}`,
    );
  }
  const out = join(tmpdir(), 'mountfleet-bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'latency.csv'), latencyCsv(rows));
  writeFileSync(
    join(out, 'latency.svg'),
    latencySvg(rows, `S3 latency by object size, local emulator (${runs} runs)`),
  );
  console.log(`wrote ${join(out, 'latency.csv')} and ${join(out, 'latency.svg')}`);
});
