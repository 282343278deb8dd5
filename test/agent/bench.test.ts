import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useEmulator } from '../support/emulator';
import { runCliInProcess } from '../support/cli';

useEmulator();

const mountfleet = runCliInProcess;

describe('mountfleet bench', () => {
  it('latency: writes a CSV and an SVG for a Standard and an Express bucket', async () => {
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

  it('latency: asks for at least one bucket', async () => {
    const r = await mountfleet('bench', 'latency');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--standard-bucket/);
  });

  it('read: reports each scenario per epoch as JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-read-cli-'));
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `s${i}`), Buffer.alloc(1000));
    writeFileSync(join(dir, 'big'), Buffer.alloc(2 * 1024 * 1024));
    const r = await mountfleet(
      'bench',
      'read',
      '--path',
      dir,
      '--epochs',
      '3',
      '--large-min-size',
      '1MiB',
      '--json',
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { results: { epoch: number; scenario: string; files: number }[] };
    expect(doc.results.map((x) => `${x.epoch}:${x.scenario}:${x.files}`)).toEqual([
      '1:small-parallel:20',
      '1:large-sequential:1',
      '2:small-parallel:20',
      '2:large-sequential:1',
      '3:small-parallel:20',
      '3:large-sequential:1',
    ]);
    expect(r.stderr).toMatch(/epoch 3 large-sequential +1 files, 2\.0 MiB/);
  });
});
