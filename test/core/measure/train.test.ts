/**
 * `bench train`'s parts: the bounded batch queue, the busy timeline, and the pipeline on a local directory
 * (epochs, batches, a failing read, a read in flight per worker). On the real Mountpoint:
 * test/agent/commands/bench-train.test.ts.
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrefetchQueue } from '../../../core/measure/prefetch-queue';
import { busyPercentBySecond, sparkline, timelineSvg } from '../../../core/measure/timeline';
import { benchTrain } from '../../../core/measure/train';
import { findDataSet } from '../../../core/measure/train-data';
import { HeldFifos } from '../../support/held-fifos';
import { until } from '../../support/mountpoint-rig';

const settledState = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  // Two turns of the microtask queue let an already-settled promise report.
  await Promise.resolve();
  await Promise.resolve();
  return state;
};

describe('PrefetchQueue', () => {
  it('holds at most `capacity` batches in flight: a worker waits for a slot until the consumer takes one', async () => {
    const q = new PrefetchQueue(2, 1);
    await q.acquire();
    await q.acquire();
    const third = q.acquire();
    expect(await settledState(third)).toBe('pending');
    q.push({ samples: 4, bytes: 40 });
    q.push({ samples: 4, bytes: 40 });
    expect(await settledState(third)).toBe('pending'); // ready but not taken: still in flight
    expect(await q.take()).toEqual({ samples: 4, bytes: 40 });
    expect(await settledState(third)).toBe('resolved');
  });

  it('hands a batch straight to a waiting consumer and ends after the last worker is done', async () => {
    const q = new PrefetchQueue(1, 2);
    const taken = q.take();
    await q.acquire();
    q.push({ samples: 1, bytes: 1 });
    expect(await taken).toEqual({ samples: 1, bytes: 1 });
    q.producerDone();
    const end = q.take();
    expect(await settledState(end)).toBe('pending'); // one worker still running
    q.producerDone();
    expect(await end).toBeUndefined();
  });

  it('a released slot goes to the next waiting worker', async () => {
    const q = new PrefetchQueue(1, 2);
    await q.acquire();
    const waiting = q.acquire();
    q.release();
    expect(await settledState(waiting)).toBe('resolved');
  });

  it('fail() rejects every waiting worker and the consumer', async () => {
    const q = new PrefetchQueue(1, 1);
    await q.acquire();
    const worker = q.acquire();
    const consumer = q.take();
    q.fail(new Error('read failed'));
    await expect(worker).rejects.toThrow('read failed');
    await expect(consumer).rejects.toThrow('read failed');
    await expect(q.take()).rejects.toThrow('read failed');
  });
});

describe('busy timeline', () => {
  it('gives each second its busy share, the last second over its own length', () => {
    const busy = [
      { start: 0, end: 500 },
      { start: 900, end: 1600 },
      { start: 2000, end: 2250 },
    ];
    expect(busyPercentBySecond(busy, 2500)).toEqual([60, 60, 50]);
    expect(busyPercentBySecond([], 0)).toEqual([]);
  });

  it('draws a sparkline from idle to busy', () => {
    expect(sparkline([0, 50, 100])).toBe('▁▅█');
  });

  it('draws one panel per series with its mean busy share, escaping labels', () => {
    const svg = timelineSvg(
      [
        { label: 'files <no cache>', busyPercentBySecond: [50, 50] },
        { label: 'tar', busyPercentBySecond: [100, 100, 100, 100] },
      ],
      'title',
    );
    expect(svg).toMatch(/^<svg /);
    expect(svg).toContain('files &lt;no cache&gt;');
    expect(svg).toContain('busy 50 % over 2 s');
    expect(svg).toContain('busy 100 % over 4 s');
    expect(svg.match(/<polygon /g)).toHaveLength(2);
  });
});

describe('benchTrain on a local directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-train-core-'));
  beforeAll(() => {
    for (let i = 0; i < 30; i++)
      writeFileSync(join(dir, `s${String(i).padStart(2, '0')}`), Buffer.alloc(100 + i));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const options = { batchSize: 4, workers: 3, prefetch: 2, stepMs: 0, epochs: 2 };

  it('reads every sample once per epoch, in batches of the size asked (the last one short)', async () => {
    const results = await benchTrain({ ...options, dataSet: await findDataSet(dir, 'files') });
    const bytes = Array.from({ length: 30 }, (_, i) => 100 + i).reduce((a, b) => a + b, 0);
    expect(results.map((r) => [r.epoch, r.complete, r.batches, r.samples, r.bytes])).toEqual([
      [1, true, 8, 30, bytes],
      [2, true, 8, 30, bytes],
    ]);
  });

  it('fails the run with the read error of a sample that is gone, not with a stop', async () => {
    const dataSet = await findDataSet(dir, 'files');
    unlinkSync(join(dir, 's17'));
    await expect(benchTrain({ ...options, dataSet })).rejects.toThrow(/ENOENT.*s17/);
  });
});

describe('benchTrain workers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-train-fifo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("have a read in flight each, beyond libuv's 4 pool threads: 8 workers are in 8 reads at once", async () => {
    // Samples that are FIFOs the test holds open: a worker opens one at once, and its read stays in flight
    // until the test writes the sample and lets go of it.
    const samples = new HeldFifos(dir, 8);
    const run = benchTrain({
      dataSet: { format: 'files', path: dir, files: samples.paths, samples: 8 },
      batchSize: 1,
      workers: 8,
      prefetch: 1,
      stepMs: 0,
      epochs: 1,
    });
    let settled = false;
    void run.finally(() => (settled = true)).catch(() => undefined);
    try {
      await until('8 reads in flight at once', () => samples.beingRead('self') === 8, 10_000);
    } finally {
      await until('the run to end', () => (samples.finishOpenedBy('self'), settled));
      samples.close();
    }
    const [epoch] = await run;
    expect([epoch.samples, epoch.bytes]).toEqual([8, 800]);
  });
});
