/**
 * `mountfleet bench train`: a training input pipeline over a mounted path, the accelerator stood in by a
 * fixed step time; per epoch it/s, MB/s and the data-wait share (the accelerator's idle time). Logic in
 * core/measure/train.ts.
 */
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { parseWholeNumber } from '../args';
import { EXIT_STATUS, UsageError } from '../../core/common';
import type { CliContext } from '../command';
import { interruptible } from '../stop-signals';
import { OutputFile, printJson, s3Phrase } from '../output';
import {
  sparkline,
  timelineSvg,
  benchTrain,
  type EpochResult,
  DataSetError,
  findDataSet,
  type SampleFormat,
} from '../../core/measure';
import { mountHolding } from '../../core/system';
import { agentS3Counter, type S3CountSource } from '../../core/agent';
import { agentPaths } from '../../core/contract';

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

export function addTrainCommand(bench: Command, ctx: CliContext): void {
  bench
    .command('train')
    .description(
      'a training input pipeline over a mounted path (workers fill a bounded batch queue, a fixed step ' +
        'time stands in for the accelerator): it/s, MB/s and the share of time spent waiting for data, per epoch',
    )
    .requiredOption('--path <dir>', 'the data set: a Mountpoint mount (or any directory)')
    .option('--batch-size <n>', 'samples per batch', '64')
    .option('--workers <n>', 'reader workers (a DataLoader num_workers)', '8')
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
      const batchSize = parseWholeNumber('--batch-size', flags.batchSize, { min: 1, max: 1_000_000 });
      const workers = parseWholeNumber('--workers', flags.workers, { min: 1, max: 1024 });
      const prefetch = parseWholeNumber('--prefetch', flags.prefetch, { min: 1, max: 1024 });
      const stepMs = parseWholeNumber('--step-ms', flags.stepMs, { min: 0, max: 3_600_000 });
      const epochs = parseWholeNumber('--epochs', flags.epochs, { min: 1, max: 1000 });
      const limit =
        flags.limit === undefined
          ? undefined
          : parseWholeNumber('--limit', flags.limit, { min: 1, max: 1_000_000_000 });
      const path = resolve(flags.path);
      const dataSet = await findDataSet(path, flags.sampleFormat, limit).catch((err: unknown) => {
        throw err instanceof DataSetError ? new UsageError(`--path: ${err.message}`) : err;
      });
      const mount = mountHolding(path);
      // A data set not on FUSE is measured all the same (a local copy is a useful baseline), but said so:
      // an empty one is most likely a mount point whose mount is not up.
      const notMountpoint = mount && !mount.fsType.startsWith('fuse') ? mount : undefined;
      if (dataSet.samples === 0) {
        throw new UsageError(
          `--path: no samples under ${path}` +
            (flags.sampleFormat === 'files' ? ' (no regular files)' : ' (shards.json lists no shards)') +
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
      // Opened before anything is read, so a chart that cannot be written does not cost the measurements.
      const chart = flags.chart === undefined ? undefined : OutputFile.open('--chart', flags.chart);
      try {
        if (notMountpoint)
          process.stderr.write(
            `note: ${path} is on ${notMountpoint.fsType} at ${notMountpoint.mountPoint}, not on a Mountpoint mount: this measures that file system\n`,
          );
        process.stderr.write(
          `${dataSet.samples} samples (${dataSet.format}) under ${path}` +
            (mount ? ` on ${mount.fsType} ${mount.mountPoint}` : '') +
            `; ${workers} workers, ${prefetch} batches each in flight, batch ${batchSize}, step ${stepMs} ms\n`,
        );

        const linesTo = flags.json ? process.stderr : process.stdout;
        let s3Source: S3CountSource | undefined;
        const results = await interruptible(
          'mountfleet bench train: stopping; printing what was measured',
          (signal) => {
            const s3 = agentS3Counter(
              path,
              agentPaths().runDir,
              (reason) => process.stderr.write(`S3 requests: not counted: ${reason}\n`),
              signal,
            );
            s3Source = s3.source;
            if ('agentMount' in s3.source)
              process.stderr.write(
                `S3 requests: from Mountpoint's metrics via the agent (mount ${s3.source.agentMount}); ` +
                  "between epochs the run waits for Mountpoint's next metrics export\n",
              );
            return benchTrain({
              dataSet,
              batchSize,
              workers,
              prefetch,
              stepMs,
              epochs,
              signal,
              s3Counter: s3.read,
              onEpoch: (r) => {
                linesTo.write(`${epochLine(r)}\n`);
                process.stderr.write(`epoch ${r.epoch} busy/s ${sparkline(r.busyPercentBySecond)}\n`);
              },
            }).finally(() => (s3Source = s3.source));
          },
        );
        // A stop ends the run early: in an epoch (reported incomplete) or between two.
        const complete = results.length === epochs && results.every((r) => r.complete);
        if (flags.json) {
          printJson({
            path,
            ...(mount ? { mount: { mountPoint: mount.mountPoint, fsType: mount.fsType } } : {}),
            sampleFormat: dataSet.format,
            samples: dataSet.samples,
            batchSize,
            workers,
            prefetch,
            stepMs,
            complete,
            s3Counts: s3Source,
            epochs: results,
          });
        }
        // After the figures are out: a chart that cannot be written fails the run without losing them.
        if (chart) {
          chart.write(
            timelineSvg(
              results.map((r) => ({ label: `epoch ${r.epoch}`, busyPercentBySecond: r.busyPercentBySecond })),
              `Consumer busy % per second: ${path}, ${dataSet.format}, batch ${batchSize}, ${workers} workers, step ${stepMs} ms`,
            ),
          );
          process.stderr.write(`wrote ${chart.path}\n`);
        }
        if (!complete) ctx.exitCode = EXIT_STATUS.interrupted;
      } finally {
        chart?.discard();
      }
    });
}
