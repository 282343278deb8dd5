/**
 * `bench train` from request to report on a local directory: the data set checked before anything is read
 * (exit 2, naming the flag), the note that this is no Mountpoint mount, the epochs and the chart. On the real
 * Mountpoint: test/agent/commands/bench-train.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../core/common/errors';
import { runTrainBench, trainChart, type TrainBenchRequest } from '../../../core/measure/train-run';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-train-run-'));
  mkdirSync(join(dir, 'data'));
  for (let i = 0; i < 8; i++) writeFileSync(join(dir, 'data', `s${i}`), Buffer.alloc(100));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const request = (fields: Partial<TrainBenchRequest> = {}): TrainBenchRequest => ({
  path: join(dir, 'data'),
  sampleFormat: 'files',
  batchSize: 4,
  workers: 2,
  prefetch: 1,
  stepMs: 0,
  epochs: 2,
  runDir: join(dir, 'run'),
  ...fields,
});

function hooks() {
  const events: string[] = [];
  return {
    events,
    hooks: {
      onStart: ({ dataSet, notMountpoint }: { dataSet: { samples: number }; notMountpoint?: unknown }) =>
        events.push(`start ${dataSet.samples} samples${notMountpoint ? ', not a Mountpoint mount' : ''}`),
      onS3Counting: (source: object) => events.push(`counting: ${'agentMount' in source ? 'agent' : 'none'}`),
      onS3NotCounted: () => events.push('not counted'),
      onEpoch: (r: { epoch: number; batches: number }) =>
        events.push(`epoch ${r.epoch}: ${r.batches} batches`),
      stoppable: <T>(run: (signal: AbortSignal) => Promise<T>) => run(new AbortController().signal),
    },
  };
}

test('runs the epochs and reports them as the --json document; the chart has one panel per epoch', async () => {
  const { events, hooks: h } = hooks();
  const report = await runTrainBench(request(), h);
  expect(events).toEqual([
    expect.stringMatching(/^start 8 samples/),
    'not counted',
    'counting: none',
    'epoch 1: 2 batches',
    'epoch 2: 2 batches',
  ]);
  expect(Object.keys(report)).toEqual([
    'path',
    ...(report.mount ? ['mount'] : []),
    'sampleFormat',
    'samples',
    'batchSize',
    'workers',
    'prefetch',
    'stepMs',
    'complete',
    's3Counts',
    'epochs',
  ]);
  expect(report).toMatchObject({ samples: 8, complete: true, s3Counts: { unavailable: expect.any(String) } });
  const chart = trainChart(report);
  expect(chart).toContain(
    `Consumer busy % per second: ${join(dir, 'data')}, files, batch 4, 2 workers, step 0 ms`,
  );
  expect(chart).toContain('>epoch 2</text>');
});

test.each([
  {
    name: 'a missing path',
    fields: () => ({ path: join(dir, 'none') }),
    message: /^--path: .* does not exist$/,
  },
  {
    name: 'no samples',
    fields: () => ({ path: join(dir, 'empty') }),
    message: /^--path: no samples under .* \(no regular files\)/,
  },
  {
    name: 'a batch larger than the data set',
    fields: () => ({ batchSize: 9 }),
    message: '--batch-size 9 is larger than the data set (8 samples): lower it or add data',
  },
  {
    name: 'tar without shards.json',
    fields: () => ({ sampleFormat: 'tar' as const }),
    message: /^--path: .*shards\.json not found: --sample-format tar reads the shards/,
  },
])('$name is a usage error, before anything is read', async ({ fields, message }) => {
  mkdirSync(join(dir, 'empty'));
  const { events, hooks: h } = hooks();
  const err = await runTrainBench(request(fields()), h).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(UsageError);
  expect((err as Error).message).toMatch(message);
  expect(events).toEqual([]);
});
