/**
 * `mountfleet bench train` from request to report: finds and checks the data set under the path (refusing
 * what cannot be measured, exit 2), counts the S3 requests of the agent's mount that serves it when there is
 * one, and runs the epochs (train.ts) until done or stopped.
 */
import { type S3CountSource, agentS3Counter } from '../agent';
import { UsageError } from '../common';
import { type MountEntry, mountHolding } from '../system';
import { timelineSvg } from './timeline';
import { type EpochResult, benchTrain } from './train';
import { type DataSet, type SampleFormat, findDataSet } from './train-data';

/** What `bench train` was asked to measure (its flags, read). */
export interface TrainBenchRequest {
  /** An absolute path. */
  readonly path: string;
  readonly sampleFormat: SampleFormat;
  readonly limit?: number;
  readonly batchSize: number;
  readonly workers: number;
  readonly prefetch: number;
  readonly stepMs: number;
  readonly epochs: number;
  /** The agent's run dir, where its state (and so the S3 counts of its mounts) is. */
  readonly runDir: string;
}

/** The data set found, before anything is read. */
export interface TrainBenchStart {
  readonly dataSet: DataSet;
  /** The mount that holds the path. */
  readonly mount?: MountEntry;
  /** That mount, when it is not FUSE: this measures another file system, not a Mountpoint mount. */
  readonly notMountpoint?: MountEntry;
}

interface TrainBenchHooks {
  /** The data set is found and checked; nothing is read yet. */
  readonly onStart: (start: TrainBenchStart) => void;
  /** Where the S3 counts come from, once known. */
  readonly onS3Counting: (source: S3CountSource) => void;
  /** Why S3 requests are not counted (once). */
  readonly onS3NotCounted: (reason: string) => void;
  readonly onEpoch: (result: EpochResult) => void;
  /** Runs the epochs with a signal that a stop (SIGINT, SIGTERM) aborts. */
  readonly stoppable: <T>(run: (signal: AbortSignal) => Promise<T>) => Promise<T>;
}

/** The `--json` document. */
interface TrainBenchReport {
  readonly path: string;
  readonly mount?: { readonly mountPoint: string; readonly fsType: string };
  readonly sampleFormat: SampleFormat;
  readonly samples: number;
  readonly batchSize: number;
  readonly workers: number;
  readonly prefetch: number;
  readonly stepMs: number;
  /** False when a stop ended the run early: in an epoch (reported incomplete) or between two. */
  readonly complete: boolean;
  readonly s3Counts: S3CountSource;
  readonly epochs: readonly EpochResult[];
}

/** Measures the request's epochs; a bad path, an empty data set or a batch larger than it is a UsageError. */
export async function runTrainBench(
  request: TrainBenchRequest,
  hooks: TrainBenchHooks,
): Promise<TrainBenchReport> {
  const { path, batchSize, workers, prefetch, stepMs } = request;
  const start = await checkedDataSet(request);
  const { dataSet, mount } = start;
  hooks.onStart(start);
  let s3Counts: S3CountSource | undefined;
  const epochs = await hooks.stoppable((signal) => {
    const s3 = agentS3Counter(path, request.runDir, hooks.onS3NotCounted, signal);
    s3Counts = s3.source;
    hooks.onS3Counting(s3.source);
    const run = { dataSet, batchSize, workers, prefetch, stepMs, epochs: request.epochs };
    return benchTrain({ ...run, signal, s3Counter: s3.read, onEpoch: hooks.onEpoch }).finally(
      () => (s3Counts = s3.source),
    );
  });
  return {
    path,
    ...(mount ? { mount: { mountPoint: mount.mountPoint, fsType: mount.fsType } } : {}),
    sampleFormat: dataSet.format,
    samples: dataSet.samples,
    batchSize,
    workers,
    prefetch,
    stepMs,
    complete: epochs.length === request.epochs && epochs.every((r) => r.complete),
    s3Counts: s3Counts!,
    epochs,
  };
}

/** The busy-per-second timeline of every epoch, as an SVG chart (`--chart`). */
export function trainChart(report: TrainBenchReport): string {
  return timelineSvg(
    report.epochs.map((r) => ({ label: `epoch ${r.epoch}`, busyPercentBySecond: r.busyPercentBySecond })),
    `Consumer busy % per second: ${report.path}, ${report.sampleFormat}, batch ${report.batchSize}, ${report.workers} workers, step ${report.stepMs} ms`,
  );
}

async function checkedDataSet(request: TrainBenchRequest): Promise<TrainBenchStart> {
  const { path, sampleFormat, batchSize } = request;
  const dataSet = await findDataSet(path, sampleFormat, request.limit);
  const mount = mountHolding(path);
  // A data set not on FUSE is measured all the same (a local copy is a useful baseline), but said so:
  // an empty one is most likely a mount point whose mount is not up.
  const notMountpoint = mount && !mount.fsType.startsWith('fuse') ? mount : undefined;
  if (dataSet.samples === 0) {
    throw new UsageError(
      `--path: no samples under ${path}` +
        (sampleFormat === 'files' ? ' (no regular files)' : ' (shards.json lists no shards)') +
        (notMountpoint
          ? `; it is not on a Mountpoint mount (${notMountpoint.fsType} at ${notMountpoint.mountPoint}): is its mount up? see \`mountfleet status\``
          : ''),
    );
  }
  if (batchSize > dataSet.samples) {
    throw new UsageError(
      `--batch-size ${batchSize} is larger than the data set (${dataSet.samples} samples): lower it or add data`,
    );
  }
  return { dataSet, ...(mount ? { mount } : {}), ...(notMountpoint ? { notMountpoint } : {}) };
}
