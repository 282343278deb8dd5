/**
 * `mountfleet bench latency`: PUT/GET latency by object size, Standard vs Express, with CSV and SVG.
 * `mountfleet bench read`: read throughput of a mounted path (small parallel, large sequential, epochs).
 * `mountfleet bench train`: agent/commands/bench-train.ts.
 * Logic in core/bench.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parsePositive, parseWholeNumber } from '../args';
import { UsageError } from '../../core/common';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { addTrainCommand } from './bench-train';
import { OutputFile, printJson } from '../output';
import { makeDirectories } from '../../core/system';
import { parseBytes } from '../../core/common';
import {
  latencyCsv,
  measureLatency,
  sizesUpTo,
  type LatencyTarget,
  benchRead,
  benchS3Client,
  formatSize,
  latencySvg,
} from '../../core/measure';

interface LatencyFlags extends AwsFlags {
  standardBucket?: string;
  expressBucket?: string;
  maxSize: string;
  runs: string;
  out: string;
  keyPrefix: string;
  createBuckets?: boolean;
  json?: boolean;
}

interface ReadFlags {
  path: string;
  concurrency: string;
  epochs: string;
  largeMinSize: string;
  json?: boolean;
}

export const register: RegisterCommand = (program, ctx) => {
  const bench = program.command('bench').description('measure S3 request latency and mount read throughput');

  bench
    .command('latency')
    .description(
      'PUT and GET latency by object size (1 B to 100 MB, x10) for a Standard and an Express bucket',
    )
    .option('--standard-bucket <name>', 'general purpose bucket')
    .option(
      '--express-bucket <name>',
      'directory bucket base--<azid>--x-s3 (zonal endpoint, CreateSession on AWS)',
    )
    .option('--max-size <size>', 'largest object size', '100MB')
    .option('--runs <n>', 'timed requests per size and operation', '10')
    .option('--out <dir>', 'where latency.csv and latency.svg go', '.')
    .option('--key-prefix <prefix>', 'prefix of the test objects (deleted afterwards)', 'mountfleet-bench/')
    .option('--create-buckets', 'create the buckets first (for emulators and scratch accounts)')
    .option('--json', 'print the rows as one JSON document')
    .addOption(regionOption())
    .addOption(profileOption())
    .action(async (flags: LatencyFlags) => {
      const sizes = sizesUpTo(parsePositive('--max-size', flags.maxSize, parseBytes));
      const runs = parseWholeNumber('--runs', flags.runs, { min: 1, max: 10000 });
      if (!flags.standardBucket && !flags.expressBucket) {
        throw new UsageError('give --standard-bucket and/or --express-bucket');
      }
      // The directory and both files before any request: a destination that cannot be written costs nothing.
      mkdirOutput(flags.out);
      const csv = OutputFile.open('--out', join(flags.out, 'latency.csv'));
      let svg: OutputFile;
      try {
        svg = OutputFile.open('--out', join(flags.out, 'latency.svg'));
      } catch (err) {
        csv.discard();
        throw err;
      }
      try {
        await resolveAws(flags);
        // The rows are the result (stdout); with --json the document is, and they are progress (stderr).
        const rowsTo = flags.json ? process.stderr : process.stdout;
        const targets: LatencyTarget[] = [
          ...(flags.standardBucket ? [{ label: 'standard', bucket: flags.standardBucket }] : []),
          ...(flags.expressBucket ? [{ label: 'express', bucket: flags.expressBucket }] : []),
        ].map((t) => ({ ...t, client: benchS3Client(t.bucket) }));
        if (flags.createBuckets) {
          for (const t of targets) await t.client.send(new CreateBucketCommand({ Bucket: t.bucket }));
        }
        const rows = await measureLatency({
          targets,
          sizes,
          runs,
          keyPrefix: flags.keyPrefix,
          onRow: (r) =>
            rowsTo.write(
              `${r.target.padEnd(8)} ${r.op} ${formatSize(r.sizeBytes).padStart(7)}: ` +
                `p50 ${r.p50.toFixed(1)} ms, p90 ${r.p90.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, mean ${r.mean.toFixed(1)} ms\n`,
            ),
        });
        csv.write(latencyCsv(rows));
        svg.write(
          latencySvg(
            rows,
            `S3 request latency by object size (${runs} runs per point; ${targets.map((t) => t.bucket).join(' vs ')})`,
          ),
        );
        if (flags.json) printJson({ csv: csv.path, svg: svg.path, rows });
        else process.stderr.write(`wrote ${csv.path} and ${svg.path}\n`);
      } finally {
        csv.discard();
        svg.discard();
      }
    });

  bench
    .command('read')
    .description(
      'read throughput of a mounted path: small files in parallel, large files sequentially, per epoch',
    )
    .requiredOption('--path <dir>', 'directory to read (a Mountpoint mount, EFS, local disk)')
    .option('--concurrency <n>', 'small files read at once', '32')
    .option('--epochs <n>', 'passes over the files', '2')
    .option('--large-min-size <size>', 'files this large or larger are read sequentially', '8MiB')
    .option('--json', 'print the results as one JSON document')
    .action(async (flags: ReadFlags) => {
      checkReadableDirectory(flags.path);
      const concurrency = parseWholeNumber('--concurrency', flags.concurrency, { min: 1, max: 1024 });
      const epochs = parseWholeNumber('--epochs', flags.epochs, { min: 1, max: 1000 });
      const largeMinBytes = parsePositive('--large-min-size', flags.largeMinSize, parseBytes);
      const resultsTo = flags.json ? process.stderr : process.stdout;
      const results = await benchRead({
        path: flags.path,
        concurrency,
        epochs,
        largeMinBytes,
        onResult: (r) =>
          resultsTo.write(
            `epoch ${r.epoch} ${r.scenario.padEnd(16)} ${r.files} files, ${(r.bytes / 1024 ** 2).toFixed(1)} MiB ` +
              `in ${r.seconds.toFixed(3)} s: ${r.filesPerSecond.toFixed(0)} files/s, ${r.mibPerSecond.toFixed(1)} MiB/s\n`,
          ),
      });
      if (flags.json) printJson({ path: flags.path, concurrency, results });
    });

  addTrainCommand(bench, ctx);
};

/** `bench latency --out DIR`, made when missing; a directory that cannot be made is a usage error. */
function mkdirOutput(dir: string): void {
  try {
    makeDirectories(dir);
  } catch (err) {
    throw new UsageError(
      `--out ${dir} cannot be created (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a writable directory`,
      { cause: err },
    );
  }
}

/** `bench read --path DIR`: a missing or non-directory path is a typo, said before anything is read. */
function checkReadableDirectory(path: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    throw new UsageError(
      `--path "${path}": no such directory; give the directory to read, e.g. --path /mnt/imagenet`,
    );
  }
  if (!isDirectory)
    throw new UsageError(
      `--path "${path}": not a directory; give the directory to read, e.g. --path /mnt/imagenet`,
    );
}
