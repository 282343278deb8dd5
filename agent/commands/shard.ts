/**
 * `mountfleet shard` packs the small objects under an S3 prefix into TAR shards with a manifest;
 * `mountfleet shard verify` reads them back and checks the round trip. Logic in core/shard.
 */
import { Option } from 'commander';
import { parsePositive, parseWholeNumber } from '../args';
import { UsageError } from '../../core/common';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { mib, printJson } from '../output';
import { stopOnSignalsOnce } from '../stop-signals';
import { s3Client } from '../../core/aws';
import { parseBytes } from '../../core/common';
import { shardPrefix, verifyShards, type SourceCheck } from '../../core/shard';

interface ShardFlags extends AwsFlags {
  bucket: string;
  prefix?: string;
  destBucket?: string;
  destPrefix: string;
  targetSize: string;
  concurrency: string;
  source: SourceCheck;
  rangeChecks: string;
  json?: boolean;
}

/** Ends a folder-like prefix with "/" so `data` and `data/` mean the same. */
const asFolder = (prefix: string) => (prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`);

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('shard')
    .description(
      'pack the small objects under an S3 prefix into TAR shards with a manifest (resumable); ' +
        '`shard verify` with the same flags reads them back and checks the round trip',
    )
    .argument('[verify]', 'check shards already written instead of writing them')
    .requiredOption('--bucket <name>', 'source bucket')
    .option('--prefix <prefix>', 'source prefix, e.g. datasets/train/ (required to write shards)')
    .option('--dest-bucket <name>', 'bucket for the shards (default: the source bucket)')
    .requiredOption('--dest-prefix <prefix>', 'prefix for shards, manifest.jsonl and shards.json')
    .option(
      '--target-size <size>',
      'largest shard (an object larger than this gets a shard of its own)',
      '256MiB',
    )
    .option('--concurrency <n>', 'small objects read ahead in parallel', '16')
    .addOption(
      new Option(
        '--source <check>',
        'verify: compare the source by listing (size, ETag), by content, or not at all',
      )
        .choices(['listing', 'content', 'none'])
        .default('listing'),
    )
    .option('--range-checks <n>', 'verify: manifest offsets checked with ranged GETs', '20')
    .option('--json', 'print the result as one JSON document')
    .addOption(regionOption())
    .addOption(profileOption())
    .action(async (mode: string | undefined, flags: ShardFlags) => {
      if (mode !== undefined && mode !== 'verify') {
        throw new UsageError(`unknown action "${mode}" (only "verify")`);
      }
      if (mode === 'verify') {
        await resolveAws(flags);
        ctx.exitCode = await verify(flags);
        return;
      }
      if (flags.prefix === undefined) throw new UsageError('--prefix is required to write shards');
      await resolveAws(flags);
      await pack({ ...flags, prefix: flags.prefix });
    });
};

/** Writes the shards; stopped by SIGINT/SIGTERM, core/shard ends the command with exit 130 (a re-run resumes). */
async function pack(flags: ShardFlags & { prefix: string }): Promise<void> {
  const targetBytes = parsePositive('--target-size', flags.targetSize, parseBytes);
  const concurrency = parseWholeNumber('--concurrency', flags.concurrency, { min: 1, max: 1024 });
  const stops = stopOnSignalsOnce(() =>
    process.stderr.write('mountfleet shard: stopping; finished shards are kept, run again to resume\n'),
  );
  try {
    const result = await shardPrefix({
      s3: s3Client(),
      bucket: flags.bucket,
      prefix: asFolder(flags.prefix),
      destBucket: flags.destBucket,
      destPrefix: asFolder(flags.destPrefix),
      targetBytes,
      concurrency,
      signal: stops.signal,
      onShard: (s, done) =>
        process.stderr.write(
          `${s.key}: ${s.objects} objects, ${mib(s.bytes)} MiB ` +
            `(${done.written} written, ${done.skipped} already done, ${done.total} in all)\n`,
        ),
    });
    if (flags.json) printJson(result);
    else {
      const rate = result.seconds > 0 ? result.objects / result.seconds : 0;
      process.stdout.write(
        `${result.objects} objects (${mib(result.bytes)} MiB) in ${result.shards.length} shards: ` +
          `${result.written} written, ${result.skipped} already done, ${result.seconds.toFixed(1)} s ` +
          `(${rate.toFixed(0)} objects/s)\n`,
      );
    }
  } finally {
    stops.dispose();
  }
}

async function verify(flags: ShardFlags): Promise<number> {
  const rangeChecks = parseWholeNumber('--range-checks', flags.rangeChecks, { min: 0, max: 100000 });
  const result = await verifyShards({
    s3: s3Client(),
    bucket: flags.destBucket ?? flags.bucket,
    destPrefix: asFolder(flags.destPrefix),
    source: flags.source,
    rangeChecks,
  });
  if (flags.json) printJson(result);
  else {
    for (const p of result.problems) process.stdout.write(`problem: ${p}\n`);
    process.stdout.write(
      `${result.ok ? 'ok' : 'FAILED'}: ${result.shards} shards, ${result.objects} objects, ` +
        `${result.rangeChecked} ranged reads, source checked by ${result.sourceChecked}\n`,
    );
  }
  return result.ok ? 0 : 1;
}
