import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchRead } from '../../../core/measure/read';

describe('bench read on a local directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-read-'));
  beforeAll(() => {
    for (let i = 0; i < 200; i++) {
      mkdirSync(join(dir, 'small', String(i % 4)), { recursive: true });
      writeFileSync(join(dir, 'small', String(i % 4), `f${i}.bin`), Buffer.alloc(4096 + i, i & 0xff));
    }
    mkdirSync(join(dir, 'large'));
    for (let i = 0; i < 2; i++)
      writeFileSync(join(dir, 'large', `big${i}.bin`), Buffer.alloc(3 * 1024 * 1024, i));
  });

  it('reads every byte of both scenarios in each epoch and reports rates', async () => {
    const results = await benchRead({ path: dir, epochs: 2, concurrency: 8, largeMinBytes: 1024 * 1024 });
    expect(results.map((r) => [r.epoch, r.scenario])).toEqual([
      [1, 'small-parallel'],
      [1, 'large-sequential'],
      [2, 'small-parallel'],
      [2, 'large-sequential'],
    ]);
    const smallBytes = Array.from({ length: 200 }, (_, i) => 4096 + i).reduce((a, b) => a + b, 0);
    for (const r of results) {
      expect(r.files).toBe(r.scenario === 'small-parallel' ? 200 : 2);
      expect(r.bytes).toBe(r.scenario === 'small-parallel' ? smallBytes : 6 * 1024 * 1024);
      expect(r.filesPerSecond).toBeCloseTo(r.files / r.seconds, 6);
      expect(r.mibPerSecond).toBeCloseTo(r.bytes / 1024 ** 2 / r.seconds, 6);
    }
  });

  it('times with the clock it is given', async () => {
    let t = 0;
    const results = await benchRead({
      path: dir,
      epochs: 1,
      largeMinBytes: 1024 * 1024,
      now: () => (t += 250),
    });
    for (const r of results) expect(r.seconds).toBe(0.25);
  });

  it('refuses an empty directory', async () => {
    await expect(benchRead({ path: mkdtempSync(join(tmpdir(), 'empty-')) })).rejects.toThrow(/no files/);
  });
});
