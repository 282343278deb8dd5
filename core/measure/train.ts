/**
 * `mountfleet bench train`: a training input pipeline over a mounted path, with the accelerator stood in
 * by a fixed step time. `workers` readers fill a bounded queue of batches (`prefetch` per worker, like
 * PyTorch's DataLoader); the consumer takes one batch, then "computes" for `stepMs`. What it measures is
 * the share of wall time the consumer waited for data: the accelerator's idle time.
 */
import { PrefetchQueue } from './prefetch-queue';
import { ReadThread } from './read-thread';
import { percentile } from './stats';
import { busyPercentBySecond, type Interval } from './timeline';
import { readShard, type DataSet } from './train-data';
import { systemClock, type Clock } from '../common';
import { s3CountBetween, type S3Count } from '../agent';

/** How one worker reads a sample of a `files` data set whole; resolves to its bytes. */
export interface SampleReader {
  readonly readSample: (sample: string) => Promise<number>;
  readonly close: () => Promise<void>;
}

interface TrainOptions {
  readonly dataSet: DataSet;
  readonly batchSize: number;
  /** Workers, each with one read in flight at a time (a DataLoader's worker processes). */
  readonly workers: number;
  /**
   * Opens one worker's reader of a `files` data set, whose `files` are then what it reads (e.g. object keys
   * for an S3 client). @default a ReadThread: the files are paths, read with blocking calls on a thread
   */
  readonly sampleReader?: () => SampleReader;
  /** Batches in flight per worker. */
  readonly prefetch: number;
  /** Milliseconds of "compute" per batch. */
  readonly stepMs: number;
  readonly epochs: number;
  /** Epoch N shuffles with seed + N, so two runs read in the same order. @default 1 */
  readonly seed?: number;
  /** Stops the run; the epoch in progress is reported with `complete: false`. */
  readonly signal?: AbortSignal;
  /** High-resolution milliseconds and the step's wait. @default performance.now and timers */
  readonly clock?: Clock;
  /**
   * S3 counters (the agent's Mountpoint metrics, the bench's proxy), read before the first epoch and after
   * each; their differences are reported per epoch. A reading's own time is not part of any epoch. A
   * reading of undefined (the counter became unavailable) ends the counting.
   */
  readonly s3Counter?: () => S3Count | undefined | Promise<S3Count | undefined>;
  readonly onEpoch?: (result: EpochResult) => void;
}

export interface EpochResult {
  readonly epoch: number;
  /** False for the epoch a stop interrupted. */
  readonly complete: boolean;
  readonly batches: number;
  readonly samples: number;
  /** Bytes read from the mount (for tar: members, headers and padding). */
  readonly bytes: number;
  readonly seconds: number;
  /** Batches per second: the it/s a training loop reports. */
  readonly itPerSecond: number;
  readonly samplesPerSecond: number;
  readonly megabytesPerSecond: number;
  /** Share of the epoch's wall time the consumer waited for a batch (0–1): the accelerator's idle time. */
  readonly dataWaitShare: number;
  /** The consumer's waits for a batch, in milliseconds. */
  readonly waitMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** The consumer's busy share of each second of the epoch, 0–100. */
  readonly busyPercentBySecond: readonly number[];
  /** S3 requests during the epoch, when an `s3Counter` was given. */
  readonly s3?: S3Count;
}

const highResolutionClock: Clock = { now: () => performance.now(), sleep: systemClock.sleep };

/** A small seeded generator (mulberry32): the same shuffle for the same seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const aborted = (signal?: AbortSignal) => signal?.aborted === true;

/** The samples with one reader per worker, for the data set's format. */
type Readers =
  | { readonly format: 'files'; readonly files: readonly string[]; readonly readers: readonly SampleReader[] }
  | {
      readonly format: 'tar';
      readonly shards: (DataSet & { format: 'tar' })['shards'];
      readonly readers: readonly ReadThread[];
    };

/** The default reader of a `files` data set: its samples are paths, read whole on a thread of the worker's own. */
function threadReader(): SampleReader {
  const thread = new ReadThread();
  return { readSample: (path) => thread.readFile(path), close: () => thread.close() };
}

function openReaders(o: TrainOptions): Readers {
  const { dataSet } = o;
  const each = <T>(open: () => T) => Array.from({ length: o.workers }, open);
  if (dataSet.format === 'tar')
    return { format: 'tar', shards: dataSet.shards, readers: each(() => new ReadThread()) };
  const open = o.sampleReader ?? threadReader;
  return { format: 'files', files: dataSet.files, readers: each(open) };
}

/**
 * One epoch's workers, each with its reader. Files: the shuffled files cut into batches; each worker takes
 * the next batch and reads its files one after another (a map-style dataset). Tar: each worker takes the
 * next shard of the shuffled list and reads it through, cutting its own stream into batches (an iterable
 * dataset).
 */
function startWorkers(
  o: TrainOptions,
  w: Readers,
  epoch: number,
  queue: PrefetchQueue,
  signal: AbortSignal,
  addBytes: (n: number) => void,
): Promise<void>[] {
  const random = seeded((o.seed ?? 1) + epoch);
  if (w.format === 'files') {
    const files = shuffled(w.files, random);
    let next = 0;
    return w.readers.map(async (reader) => {
      try {
        for (;;) {
          await queue.acquire();
          const start = next * o.batchSize;
          next++;
          if (start >= files.length || aborted(signal)) {
            queue.release();
            break;
          }
          let bytes = 0;
          const batch = files.slice(start, start + o.batchSize);
          for (const file of batch) {
            if (aborted(signal)) break;
            const read = await reader.readSample(file);
            bytes += read;
            addBytes(read);
          }
          queue.push({ samples: batch.length, bytes });
        }
      } finally {
        queue.producerDone();
      }
    });
  }
  const shards = shuffled(w.shards, random);
  let next = 0;
  return w.readers.map(async (thread) => {
    let samples = 0;
    let bytes = 0;
    const onSample = async (size: number) => {
      if (samples === 0) await queue.acquire();
      samples++;
      bytes += size;
      if (samples === o.batchSize) {
        queue.push({ samples, bytes });
        samples = 0;
        bytes = 0;
      }
    };
    try {
      while (next < shards.length && !aborted(signal)) {
        await readShard(thread.chunks(shards[next++].path), { onSample, onBytes: addBytes, signal });
      }
      if (samples > 0) queue.push({ samples, bytes });
    } finally {
      queue.producerDone();
    }
  });
}

/** One epoch; `s3Before` is the counter's reading before it, and the result carries the one after it. */
async function runEpoch(
  o: TrainOptions,
  readers: Readers,
  epoch: number,
  clock: Clock,
  s3Before: S3Count | undefined,
): Promise<{ result: EpochResult; s3After?: S3Count }> {
  const queue = new PrefetchQueue(o.prefetch * o.workers, o.workers);
  // Workers stop with the run, or when one of them fails (the others would wait for slots for ever).
  const stop = new AbortController();
  const onAbort = () => {
    stop.abort();
    queue.fail(new Error('stopped'));
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let bytes = 0;
  const started = clock.now();
  const workers = startWorkers(o, readers, epoch, queue, stop.signal, (n) => (bytes += n));
  // Every worker, to its end: a read in flight when the run stops still counts, and no file stays open.
  // The first failure stops the others (they would wait for slots for ever) and is the epoch's error.
  let workerFailure: { error: unknown } | undefined;
  const settled = Promise.all(
    workers.map((w) =>
      w.catch((error: unknown) => {
        workerFailure ??= { error };
        queue.fail(error);
        stop.abort();
      }),
    ),
  );

  const waits: number[] = [];
  const busy: Interval[] = [];
  let batches = 0;
  let samples = 0;
  let failure: unknown;
  try {
    for (;;) {
      const waitStarted = clock.now();
      const batch = await queue.take();
      if (!batch) break;
      const computeStarted = clock.now();
      waits.push(computeStarted - waitStarted);
      if (o.stepMs > 0) await clock.sleep(o.stepMs, o.signal);
      busy.push({ start: computeStarted - started, end: clock.now() - started });
      batches++;
      samples += batch.samples;
    }
  } catch (err) {
    if (!aborted(o.signal)) failure = err;
  }
  const elapsedMs = clock.now() - started;
  o.signal?.removeEventListener('abort', onAbort);
  await settled;
  if (!aborted(o.signal)) failure ??= workerFailure?.error;
  if (failure) throw failure;
  // A stop skips the reading: it may wait for Mountpoint's next export.
  const s3After = s3Before && !aborted(o.signal) ? await o.s3Counter?.() : undefined;
  const seconds = elapsedMs / 1000;
  const sorted = [...waits].sort((a, b) => a - b);
  const waited = waits.reduce((a, b) => a + b, 0);
  const result: EpochResult = {
    epoch,
    complete: !aborted(o.signal),
    batches,
    samples,
    bytes,
    seconds,
    itPerSecond: batches / seconds,
    samplesPerSecond: samples / seconds,
    megabytesPerSecond: bytes / 1e6 / seconds,
    // Time not spent computing: waits for batches, and a stop's cut-short step.
    dataWaitShare: elapsedMs > 0 ? Math.min(1, waited / elapsedMs) : 0,
    waitMs: { p50: percentile(sorted, 50) || 0, p99: percentile(sorted, 99) || 0, max: sorted.at(-1) ?? 0 },
    busyPercentBySecond: busyPercentBySecond(busy, elapsedMs),
    ...(s3Before && s3After ? { s3: s3CountBetween(s3Before, s3After) } : {}),
  };
  return { result, ...(s3After ? { s3After } : {}) };
}

/**
 * Runs the epochs in turn, each worker with the same reader throughout (a DataLoader's persistent workers); a
 * stop ends the run after reporting the epoch it interrupted.
 */
export async function benchTrain(o: TrainOptions): Promise<EpochResult[]> {
  const clock = o.clock ?? highResolutionClock;
  const results: EpochResult[] = [];
  const readers = openReaders(o);
  try {
    let s3 = await o.s3Counter?.();
    for (let epoch = 1; epoch <= o.epochs && !aborted(o.signal); epoch++) {
      const { result, s3After } = await runEpoch(o, readers, epoch, clock, s3);
      s3 = s3After;
      results.push(result);
      o.onEpoch?.(result);
    }
    return results;
  } finally {
    await Promise.all(readers.readers.map((r) => r.close()));
  }
}
