import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { latencyCsv, measureLatency, sizesUpTo } from '../../../core/measure/latency';
import { isDirectoryBucket } from '../../../core/aws/clients';
import { benchS3Client } from '../../../core/measure/s3-clients';
import { percentile, summarize } from '../../../core/measure/stats';
import { latencySvg } from '../../../core/measure/svg';
import { useEmulator } from '../../support/emulator';

useEmulator();

const STANDARD = 'bench-standard';
const EXPRESS = 'bench--use1-az4--x-s3';

describe('bench latency against the emulator', () => {
  it('times PUT and GET per size for a Standard and a directory bucket, then removes its objects', async () => {
    const targets = [
      { label: 'standard', bucket: STANDARD, client: benchS3Client(STANDARD) },
      { label: 'express', bucket: EXPRESS, client: benchS3Client(EXPRESS) },
    ];
    for (const t of targets) await t.client.send(new CreateBucketCommand({ Bucket: t.bucket }));

    const rows = await measureLatency({ targets, sizes: sizesUpTo(10_000), runs: 3 });

    expect(rows).toHaveLength(2 * 5 * 2);
    for (const r of rows) {
      expect(r.count).toBe(3);
      expect(r.min).toBeGreaterThan(0);
      expect(r.p50).toBeLessThanOrEqual(r.p90);
      expect(r.p90).toBeLessThanOrEqual(r.p99);
      expect(r.max).toBe(r.p99);
    }
    expect(rows.filter((r) => r.target === 'express').map((r) => r.sizeBytes)).toEqual([
      1, 1, 10, 10, 100, 100, 1000, 1000, 10000, 10000,
    ]);
    for (const t of targets) {
      const left = await t.client.send(new ListObjectsV2Command({ Bucket: t.bucket }));
      expect(left.KeyCount ?? 0).toBe(0);
    }

    const csv = latencyCsv(rows).trim().split('\n');
    expect(csv[0]).toBe('target,op,size_bytes,runs,p50_ms,p90_ms,p99_ms,mean_ms,min_ms,max_ms');
    expect(csv).toHaveLength(1 + rows.length);
    expect(csv[1]).toMatch(/^standard,PUT,1,3,\d+\.\d{3},/);
  });

  it('reaches a directory bucket through the emulator only with the path fix', () => {
    expect(isDirectoryBucket(EXPRESS)).toBe(true);
    expect(isDirectoryBucket(STANDARD)).toBe(false);
    const names = benchS3Client(EXPRESS).middlewareStack.identify();
    expect(names.some((n) => n.startsWith('mountfleetExpressPathFix'))).toBe(true);
    expect(
      benchS3Client(STANDARD)
        .middlewareStack.identify()
        .some((n) => n.startsWith('mountfleetExpressPathFix')),
    ).toBe(false);
  });
});

describe('latency summaries and plot', () => {
  it('takes nearest-rank percentiles', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i);
    const s = summarize(samples);
    expect([s.p50, s.p90, s.p99, s.min, s.max, s.mean]).toEqual([50, 90, 99, 1, 100, 50.5]);
    expect(percentile([7], 99)).toBe(7);
  });

  it('draws one line per target and percentile in each panel, on log axes', () => {
    const row = (target: string, op: 'PUT' | 'GET', sizeBytes: number, base: number) => ({
      target,
      op,
      sizeBytes,
      ...summarize([base, base * 1.5, base * 3]),
    });
    const rows = [1, 1000, 1_000_000].flatMap((size, i) => [
      row('standard', 'PUT', size, 20 + i * 10),
      row('standard', 'GET', size, 15 + i * 10),
      row('express', 'PUT', size, 5 + i * 5),
      row('express', 'GET', size, 4 + i * 5),
    ]);
    const svg = latencySvg(rows, 'test <plot>');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('test &lt;plot&gt;');
    expect(svg.match(/<polyline/g)).toHaveLength(2 * 2 * 3);
    for (const label of ['1 B', '1 KB', '1 MB', '10 ms', '100 ms']) expect(svg).toContain(`>${label}</text>`);
  });
});
