/**
 * Amazon S3 Files (2026: NFS access to a general-purpose S3 bucket, built on EFS) as a scratch option: what
 * the planned work costs on it and whether its limits carry the run. Pure.
 *
 * Limits and metering rules, from the AWS S3 User Guide (read from the stored copies on 2026-11-26):
 * - performance: https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-files-performance.html
 *   (3 GiB/s per-client read; 1–5 GiB/s aggregate write per file system, depending on the region; export to
 *   the bucket 2,700 MB/s and 800 files/s after a ~60 s batching window);
 * - metering: https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-files-metering.html
 *   (writes land on high-performance storage, metered at their size, 32 KiB minimum; exporting them to the
 *   bucket is metered as a file read; reads of 1 MiB or larger of synced data, and reads of data not on
 *   high-performance storage, stream from the bucket with no file read charge but a 4 KiB metadata read;
 *   other reads are metered at their size, 32 KiB minimum, plus a 4 KiB metadata read; sizes round up to 1 KiB);
 * - overview: https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-files.html (small files, < 128 KiB by
 *   default, are imported onto high-performance storage; recently written data not yet synced is always
 *   served from the file system). An earlier version of these pages put the direct-read threshold at 128 KB.
 */
import type { CostOption } from './costs';
import { HOURS_PER_MONTH, type RegionPrices } from './prices';

const KIB = 1024;
const MIB = 1024 * KIB;
const PER_CLIENT_READ_MIB_PER_S = 3 * 1024;
/** The low end of "1–5 GiB/s depending on the region": a plan that fits here fits in every region. */
const AGGREGATE_WRITE_MIB_PER_S = 1024;
const DIRECT_READ_MIN_BYTES = MIB;
const MIN_DATA_OP_BYTES = 32 * KIB;
const METADATA_OP_BYTES = 4 * KIB;

interface S3FilesCheck {
  readonly limit: string;
  readonly fits: boolean;
  readonly detail: string;
}

export interface S3FilesPlan {
  /** The job's read size (`--read-size`): 1 MiB or more streams from the bucket. */
  readonly readBytes: number;
  readonly readsDirect: boolean;
  /** GiB metered at S3 Files prices, by kind. */
  readonly meteredGib: {
    readonly write: number;
    readonly exportRead: number;
    readonly dataRead: number;
    readonly metadataRead: number;
  };
  readonly checks: readonly S3FilesCheck[];
  /** Prices the region's table lacks: then S3 Files is left out of the comparison. */
  readonly unknown: readonly string[];
}

interface S3FilesInput {
  readonly steps: readonly {
    readonly readGib: number;
    readonly writeGib: number;
    readonly seconds: number;
  }[];
  readonly totals: { readonly readGib: number; readonly writeGib: number };
  readonly prices: RegionPrices;
  readonly readBytes: number;
}

const ceilKib = (bytes: number) => Math.ceil(bytes / KIB) * KIB;
const peak = (rates: number[]) => rates.reduce((a, b) => Math.max(a, b), 0);

/** What S3 Files meters for the run, and its limits against the busiest step. */
export function planS3Files({ steps, totals, prices, readBytes }: S3FilesInput): S3FilesPlan {
  const readsDirect = readBytes >= DIRECT_READ_MIN_BYTES;
  const readOps = (totals.readGib * 1024 * MIB) / readBytes;
  const opGib = (bytes: number) => (readOps * ceilKib(bytes)) / (1024 * MIB);
  const timed = steps.filter((s) => s.seconds > 0);
  const writeMibPerS = peak(timed.map((s) => (s.writeGib * 1024) / s.seconds));
  const readMibPerS = peak(timed.map((s) => (s.readGib * 1024) / s.seconds));
  const missing = (['s3FilesStorageGbMonth', 's3FilesReadPerGb', 's3FilesWritePerGb'] as const).filter(
    (key) => prices[key] === undefined,
  );
  return {
    readBytes,
    readsDirect,
    meteredGib: {
      write: totals.writeGib,
      exportRead: totals.writeGib,
      dataRead: readsDirect ? 0 : opGib(Math.max(readBytes, MIN_DATA_OP_BYTES)),
      metadataRead: opGib(METADATA_OP_BYTES),
    },
    checks: [
      {
        limit: 'the 1 GiB/s aggregate write (the lowest of 1–5 GiB/s by region)',
        fits: writeMibPerS <= AGGREGATE_WRITE_MIB_PER_S,
        detail: `busiest step writes ${writeMibPerS.toFixed(0)} MiB/s`,
      },
      {
        limit: 'the 3 GiB/s per-client read',
        fits: readMibPerS <= PER_CLIENT_READ_MIB_PER_S,
        detail: `busiest step reads ${readMibPerS.toFixed(0)} MiB/s`,
      },
    ],
    unknown: missing.length
      ? [`S3 Files prices for ${prices.region} (${missing.join(', ')}): give them with --price KEY=VALUE`]
      : [],
  };
}

/** The S3 Files row of the cost table, when the region's prices are known. */
export function s3FilesCost(
  plan: S3FilesPlan,
  storage: { readonly gibHours: number },
  prices: RegionPrices,
): CostOption | undefined {
  const { s3FilesStorageGbMonth: store, s3FilesReadPerGb: read, s3FilesWritePerGb: write } = prices;
  if (store === undefined || read === undefined || write === undefined) return undefined;
  const m = plan.meteredGib;
  const usd =
    (storage.gibHours / HOURS_PER_MONTH) * store +
    m.write * write +
    (m.exportRead + m.dataRead + m.metadataRead) * read;
  const failed = plan.checks.filter((c) => !c.fits);
  const reads = plan.readsDirect ? 'reads from the bucket' : 'reads charged (below 1 MiB)';
  return {
    option: 's3-files',
    label: 'S3 Files',
    usd,
    feasible: failed.length === 0,
    compared: true,
    detail:
      failed.length > 0
        ? failed.map((c) => `${c.detail}, above ${c.limit}`).join('; ')
        : `storage + ${m.write.toFixed(1)} GiB written, exported; ${reads}`,
  };
}
