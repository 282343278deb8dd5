/**
 * `mountfleet bench latency`: PUT/GET latency by object size, Standard vs Express, with CSV and SVG. The work
 * lives in core/measure (runLatencyBench).
 */
import { UsageError, parseBytes } from '../../core/common';
import { formatSize, runLatencyBench, sizesUpTo, type LatencyBenchRequest } from '../../core/measure';
import { parsePositive, parseWholeNumber } from '../args';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { OutputFile, printJson } from '../output';

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

export const register: RegisterCommand = (bench) => {
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
      const request = latencyRequest(flags);
      // The directory and both files before any request: a destination that cannot be written costs nothing.
      const [csv, svg] = OutputFile.openAllIn('--out', flags.out, ['latency.csv', 'latency.svg']);
      try {
        await resolveAws(flags);
        // The rows are the result (stdout); with --json the document is, and they are progress (stderr).
        const rowsTo = flags.json ? process.stderr : process.stdout;
        const result = await runLatencyBench(request, (r) =>
          rowsTo.write(
            `${r.target.padEnd(8)} ${r.op} ${formatSize(r.sizeBytes).padStart(7)}: ` +
              `p50 ${r.p50.toFixed(1)} ms, p90 ${r.p90.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, mean ${r.mean.toFixed(1)} ms\n`,
          ),
        );
        csv.write(result.csv);
        svg.write(result.svg);
        if (flags.json) printJson({ csv: csv.path, svg: svg.path, rows: result.rows });
        else process.stderr.write(`wrote ${csv.path} and ${svg.path}\n`);
      } finally {
        csv.discard();
        svg.discard();
      }
    });
};

function latencyRequest(flags: LatencyFlags): LatencyBenchRequest {
  const sizes = sizesUpTo(parsePositive('--max-size', flags.maxSize, parseBytes));
  const runs = parseWholeNumber('--runs', flags.runs, { min: 1, max: 10000 });
  if (!flags.standardBucket && !flags.expressBucket) {
    throw new UsageError('give --standard-bucket and/or --express-bucket');
  }
  return {
    standardBucket: flags.standardBucket,
    expressBucket: flags.expressBucket,
    sizes,
    runs,
    keyPrefix: flags.keyPrefix,
    createBuckets: flags.createBuckets === true,
  };
}
