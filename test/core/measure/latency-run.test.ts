/** `bench latency` from request to results against the emulator: buckets made on request, rows, CSV and chart. */
import { runLatencyBench } from '../../../core/measure/latency-run';
import { useEmulator } from '../../support/emulator';

useEmulator();

test('makes the buckets, measures each size for each bucket and gives the rows as CSV and SVG', async () => {
  const seen: string[] = [];
  const result = await runLatencyBench(
    {
      standardBucket: 'run-standard',
      expressBucket: 'run--use1-az4--x-s3',
      sizes: [1, 100],
      runs: 2,
      keyPrefix: 'latency-run/',
      createBuckets: true,
    },
    (row) => seen.push(`${row.target} ${row.op} ${row.sizeBytes}`),
  );
  expect(seen).toEqual([
    'standard PUT 1',
    'standard GET 1',
    'standard PUT 100',
    'standard GET 100',
    'express PUT 1',
    'express GET 1',
    'express PUT 100',
    'express GET 100',
  ]);
  expect(result.rows).toHaveLength(8);
  expect(result.csv.trim().split('\n')).toHaveLength(1 + 8);
  expect(result.svg).toContain(
    'S3 request latency by object size (2 runs per point; run-standard vs run--use1-az4--x-s3)',
  );
});
