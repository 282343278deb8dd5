/**
 * Read throughput of a local directory in the seed's three scenarios: many small files in parallel,
 * large files sequentially, repeated epochs. Generates the files in a temporary directory (removed
 * afterwards) unless BENCH_PATH names an existing one (a mount, say).
 *
 *   npx tsx bench/read.ts
 *   BENCH_PATH=/mnt/data CONCURRENCY=64 npx tsx bench/read.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { benchRead } from '../core/measure/read';

const SMALL_FILES = 2000;
const SMALL_BYTES = 100 * 1024;
const LARGE_FILES = 4;
const LARGE_BYTES = 64 * 1024 * 1024;

async function main() {
  const generated = process.env.BENCH_PATH ? undefined : mkdtempSync(join(tmpdir(), 'mountfleet-read-'));
  const path = process.env.BENCH_PATH ?? (generated as string);
  try {
    if (generated) {
      const block = randomBytes(SMALL_BYTES);
      for (let i = 0; i < SMALL_FILES; i++) {
        const dir = join(generated, 'small', String(i % 20));
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `${i}.bin`), block);
      }
      mkdirSync(join(generated, 'large'));
      const chunk = randomBytes(LARGE_BYTES);
      for (let i = 0; i < LARGE_FILES; i++) writeFileSync(join(generated, 'large', `${i}.bin`), chunk);
      console.log(`generated ${SMALL_FILES} x 100 KiB and ${LARGE_FILES} x 64 MiB files in ${generated}`);
    }
    for (const concurrency of (process.env.CONCURRENCY ?? '1,8,32').split(',').map(Number)) {
      const results = await benchRead({ path, concurrency, epochs: 3 });
      for (const r of results) {
        console.log(
          `concurrency ${String(concurrency).padStart(2)}  epoch ${r.epoch}  ${r.scenario.padEnd(16)} ` +
            `${String(r.files).padStart(5)} files ${(r.bytes / 1024 ** 2).toFixed(0).padStart(5)} MiB ` +
            `${r.seconds.toFixed(3).padStart(7)} s  ${r.filesPerSecond.toFixed(0).padStart(7)} files/s ` +
            `${r.mibPerSecond.toFixed(0).padStart(6)} MiB/s`,
        );
      }
    }
  } finally {
    if (generated) rmSync(generated, { recursive: true, force: true });
  }
}

void main();
