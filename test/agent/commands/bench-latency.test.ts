import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess } from '../../support/cli';
import { useEmulator } from '../../support/emulator';

useEmulator();

const mountfleet = runCliInProcess;

describe('mountfleet bench latency', () => {
  it('writes a CSV and an SVG for a Standard and an Express bucket', async () => {
    const out = mkdtempSync(join(tmpdir(), 'bench-latency-'));
    const r = await mountfleet(
      'bench',
      'latency',
      '--standard-bucket',
      'lat-std',
      '--express-bucket',
      'lat--use1-az4--x-s3',
      '--create-buckets',
      '--max-size',
      '1KB',
      '--runs',
      '2',
      '--out',
      out,
      '--json',
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { csv: string; svg: string; rows: unknown[] };
    expect(doc.rows).toHaveLength(2 * 4 * 2);
    const csv = readFileSync(join(out, 'latency.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(1 + 16);
    expect(csv.filter((l) => l.startsWith('express,GET,'))).toHaveLength(4);
    expect(readFileSync(join(out, 'latency.svg'), 'utf8')).toContain('lat--use1-az4--x-s3');
    expect(r.stderr).toMatch(/express +GET +1 KB: p50 [\d.]+ ms, p90/);
  });

  it('asks for at least one bucket', async () => {
    const r = await mountfleet('bench', 'latency');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--standard-bucket/);
  });
});
