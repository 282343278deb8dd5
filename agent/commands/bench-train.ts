/**
 * `mountfleet bench train`: a training input pipeline over a mounted path, the accelerator stood in by a
 * fixed step time; per epoch it/s, MB/s and the data-wait share (the accelerator's idle time). The work
 * lives in core/measure (runTrainBench).
 */
import { Option } from 'commander';
import { resolve } from 'node:path';
import { EXIT_STATUS } from '../../core/common';
import { agentPaths } from '../../core/contract';
import {
  type EpochResult,
  type SampleFormat,
  type TrainBenchRequest,
  type TrainBenchStart,
  runTrainBench,
  sparkline,
  trainChart,
} from '../../core/measure';
import { parseWholeNumber } from '../args';
import type { RegisterCommand } from '../command';
import { OutputFile, printJson, s3Phrase } from '../output';
import { interruptible } from '../stop-signals';

interface TrainFlags {
  path: string;
  batchSize: string;
  workers: string;
  prefetch: string;
  stepMs: string;
  epochs: string;
  sampleFormat: SampleFormat;
  limit?: string;
  chart?: string;
  json?: boolean;
}

export const register: RegisterCommand = (bench, ctx) => {
  bench
    .command('train')
    .description(
      'a training input pipeline over a mounted path (workers fill a bounded batch queue, a fixed step ' +
        'time stands in for the accelerator): it/s, MB/s and the share of time spent waiting for data, per epoch',
    )
    .requiredOption('--path <dir>', 'the data set: a Mountpoint mount (or any directory)')
    .option('--batch-size <n>', 'samples per batch', '64')
    .option(
      '--workers <n>',
      'reader workers, each with one read in flight on a thread of its own (a DataLoader num_workers: one ' +
        'worker process each); N workers keep N reads in flight',
      '8',
    )
    .option('--prefetch <n>', 'batches in flight per worker (a DataLoader prefetch_factor)', '2')
    .option('--step-ms <ms>', 'milliseconds of compute per batch (0: measure the loader alone)', '100')
    .option('--epochs <n>', 'passes over the data set, each shuffled', '2')
    .addOption(
      new Option(
        '--sample-format <format>',
        'files: one sample per file; tar: the members of `mountfleet shard` shards',
      )
        .choices(['files', 'tar'])
        .default('files'),
    )
    .option('--limit <n>', 'use the first N samples (tar: whole shards, until N samples are in)')
    .option('--chart <file>', 'write the busy-per-second timeline as an SVG chart')
    .option('--json', 'print every figure as one JSON document')
    .action(async (flags: TrainFlags) => {
      const request = trainRequest(flags);
      // Opened once the data set is checked, before anything is read: a chart that cannot be written does
      // not cost the measurements.
      let chart: OutputFile | undefined;
      const linesTo = flags.json ? process.stderr : process.stdout;
      try {
        const report = await runTrainBench(request, {
          onStart: (start) => {
            if (flags.chart !== undefined) chart = OutputFile.open('--chart', flags.chart);
            process.stderr.write(startLines(request, start));
          },
          onS3NotCounted: (reason) => process.stderr.write(`S3 requests: not counted: ${reason}\n`),
          onS3Counting: (source) => {
            if ('agentMount' in source)
              process.stderr.write(
                `S3 requests: from Mountpoint's metrics via the agent (mount ${source.agentMount}); ` +
                  "between epochs the run waits for Mountpoint's next metrics export\n",
              );
          },
          onEpoch: (r) => {
            linesTo.write(`${epochLine(r)}\n`);
            process.stderr.write(`epoch ${r.epoch} busy/s ${sparkline(r.busyPercentBySecond)}\n`);
          },
          stoppable: (run) =>
            interruptible('mountfleet bench train: stopping; printing what was measured', run),
        });
        if (flags.json) printJson(report);
        // After the figures are out: a chart that cannot be written fails the run without losing them.
        if (chart) {
          chart.write(trainChart(report));
          process.stderr.write(`wrote ${chart.path}\n`);
        }
        if (!report.complete) ctx.exitCode = EXIT_STATUS.interrupted;
      } finally {
        chart?.discard();
      }
    });
};

function trainRequest(flags: TrainFlags): TrainBenchRequest {
  return {
    batchSize: parseWholeNumber('--batch-size', flags.batchSize, { min: 1, max: 1_000_000 }),
    workers: parseWholeNumber('--workers', flags.workers, { min: 1, max: 1024 }),
    prefetch: parseWholeNumber('--prefetch', flags.prefetch, { min: 1, max: 1024 }),
    stepMs: parseWholeNumber('--step-ms', flags.stepMs, { min: 0, max: 3_600_000 }),
    epochs: parseWholeNumber('--epochs', flags.epochs, { min: 1, max: 1000 }),
    ...(flags.limit === undefined
      ? {}
      : { limit: parseWholeNumber('--limit', flags.limit, { min: 1, max: 1_000_000_000 }) }),
    path: resolve(flags.path),
    sampleFormat: flags.sampleFormat,
    runDir: agentPaths().runDir,
  };
}

/** What is measured: a note when it is no Mountpoint mount, then the data set and the pipeline. */
function startLines(request: TrainBenchRequest, { dataSet, mount, notMountpoint }: TrainBenchStart): string {
  const { path, workers, prefetch, batchSize, stepMs } = request;
  return (
    (notMountpoint
      ? `note: ${path} is on ${notMountpoint.fsType} at ${notMountpoint.mountPoint}, not on a Mountpoint mount: this measures that file system\n`
      : '') +
    `${dataSet.samples} samples (${dataSet.format}) under ${path}` +
    (mount ? ` on ${mount.fsType} ${mount.mountPoint}` : '') +
    `; ${workers} workers, ${prefetch} batches each in flight, batch ${batchSize}, step ${stepMs} ms\n`
  );
}

const percent = (share: number) => `${(share * 100).toFixed(0)} %`;

function epochLine(r: EpochResult): string {
  return (
    `epoch ${r.epoch}${r.complete ? '' : ' (stopped)'}: ${r.itPerSecond.toFixed(2)} it/s, ` +
    `${r.samplesPerSecond.toFixed(0)} samples/s, ${r.megabytesPerSecond.toFixed(1)} MB/s, ` +
    `data wait ${percent(r.dataWaitShare)} (p50 ${r.waitMs.p50.toFixed(0)} ms, p99 ${r.waitMs.p99.toFixed(0)} ms), ` +
    `${r.batches} batches in ${r.seconds.toFixed(1)} s` +
    (r.s3 ? `, ${s3Phrase(r.s3)}` : '')
  );
}
