/**
 * Region prices the plan needs, as a small built-in table with the date the figures were taken and
 * where they came from. Prices change: `--prices FILE` (a JSON object of the same shape) or
 * `--price KEY=VALUE` override any of them.
 *
 * Units: "GB" on AWS storage bills is a binary gigabyte (GiB), so every per-GB price here is applied
 * to GiB. A "month" is 720 hours (the 30-day month of the AWS EBS pricing examples; a real bill
 * prorates over the calendar month, which moves these figures by up to 3%).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../common';

export const HOURS_PER_MONTH = 720;

const regionPricesSchema = z
  .object({
    region: z.string(),
    /** When the figures were taken (YYYY-MM or YYYY-MM-DD). */
    asOf: z.string(),
    /** Where they came from. */
    sources: z.array(z.string()),
    /** EFS One Zone storage, USD per GB-month (same price in bursting and elastic throughput modes). */
    efsOneZoneStorageGbMonth: z.number().nonnegative(),
    /** EFS Elastic throughput, USD per GB read. */
    efsElasticReadPerGb: z.number().nonnegative(),
    /** EFS Elastic throughput, USD per GB written. */
    efsElasticWritePerGb: z.number().nonnegative(),
    /** EBS gp3 storage, USD per GB-month. */
    ebsGp3StorageGbMonth: z.number().nonnegative(),
    /** EBS gp3 throughput above the included 125 MB/s, USD per MB/s-month. */
    ebsGp3ThroughputMbpsMonth: z.number().nonnegative(),
    /** S3 Files high-performance storage, USD per GB-month (absent: unknown, S3 Files is not compared). */
    s3FilesStorageGbMonth: z.number().nonnegative().optional(),
    /** S3 Files data access, USD per GB read from high-performance storage (exports to the bucket included). */
    s3FilesReadPerGb: z.number().nonnegative().optional(),
    /** S3 Files data access, USD per GB written to high-performance storage. */
    s3FilesWritePerGb: z.number().nonnegative().optional(),
  })
  .strict();
export type RegionPrices = z.infer<typeof regionPricesSchema>;

/** Keys a `--price KEY=VALUE` flag may set. */
export const PRICE_KEYS = [
  'efsOneZoneStorageGbMonth',
  'efsElasticReadPerGb',
  'efsElasticWritePerGb',
  'ebsGp3StorageGbMonth',
  'ebsGp3ThroughputMbpsMonth',
  's3FilesStorageGbMonth',
  's3FilesReadPerGb',
  's3FilesWritePerGb',
] as const;
type PriceKey = (typeof PRICE_KEYS)[number];

export const BUILT_IN_PRICES: Record<string, RegionPrices> = {
  'us-east-1': {
    region: 'us-east-1',
    asOf: '2026-06',
    sources: [
      'https://aws.amazon.com/efs/pricing/ (One Zone storage $0.16/GB-month; Elastic $0.03/GB read, $0.06/GB write, as quoted on 2026-06-13 by factualminds.com)',
      'https://aws.amazon.com/ebs/pricing/ (gp3 $0.08/GB-month, $0.04 per MB/s-month above 125 MB/s)',
      'https://aws.amazon.com/s3/pricing/ (S3 Files: high-performance storage $0.30/GB-month, reads $0.03/GB, writes $0.06/GB; ' +
        "not read from AWS's page itself (its rate cells are in no stored copy, looked for on 2026-11-26): " +
        'as quoted for popular US regions on 2026-04-28 in juicedata/juicefs PR 6973 (juicefs_vs_s3files.md), the write ' +
        'price also as "$60 per TB" on 2026-05-14 in Barre/ZeroFS issue 406; the metering rules are AWS\'s own, see s3-files.ts)',
    ],
    efsOneZoneStorageGbMonth: 0.16,
    efsElasticReadPerGb: 0.03,
    efsElasticWritePerGb: 0.06,
    ebsGp3StorageGbMonth: 0.08,
    ebsGp3ThroughputMbpsMonth: 0.04,
    s3FilesStorageGbMonth: 0.3,
    s3FilesReadPerGb: 0.03,
    s3FilesWritePerGb: 0.06,
  },
  'ap-northeast-1': {
    region: 'ap-northeast-1',
    asOf: '2026-06',
    sources: [
      'the 30-minute ProRes encode ladder measurement (Tokyo): Elastic $0.04/GB read, $0.07/GB write; gp3 $0.096/GB-month (its $0.00524 for 40 GB over 59 min)',
      'One Zone storage $0.192/GB-month: not confirmed from an AWS page here; Tokyo Standard $0.36 x (One Zone/Standard in us-east-1, 0.16/0.30). Override with --price if it differs',
      'gp3 throughput $0.048 per MB/s-month: us-east-1 price x the Tokyo/us-east-1 gp3 storage ratio (1.2); unverified',
      'S3 Files: unknown (no stored page gives its Tokyo rates, looked for on 2026-11-26); S3 Files is left out until given with --price',
    ],
    efsOneZoneStorageGbMonth: 0.192,
    efsElasticReadPerGb: 0.04,
    efsElasticWritePerGb: 0.07,
    ebsGp3StorageGbMonth: 0.096,
    ebsGp3ThroughputMbpsMonth: 0.048,
  },
};

/**
 * The prices for a run: the built-in entry for `region` (or the file, which replaces it), then each
 * `KEY=VALUE` override on top.
 */
export function resolvePrices(options: {
  region: string;
  file?: string;
  overrides?: readonly string[];
}): RegionPrices {
  let prices: RegionPrices;
  if (options.file) {
    const parsed = regionPricesSchema.safeParse(JSON.parse(readFileSync(options.file, 'utf8')));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(`${options.file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    prices = parsed.data;
  } else {
    const builtIn = BUILT_IN_PRICES[options.region];
    if (!builtIn) {
      throw new UsageError(
        `no built-in prices for ${options.region} (have ${Object.keys(BUILT_IN_PRICES).join(', ')}): ` +
          'pass --prices FILE',
      );
    }
    prices = { ...builtIn, sources: [...builtIn.sources] };
  }
  for (const override of options.overrides ?? []) {
    const [key, value] = override.split('=', 2);
    if (
      !(PRICE_KEYS as readonly string[]).includes(key) ||
      value === undefined ||
      !/^\d+(\.\d+)?$/.test(value)
    ) {
      throw new UsageError(`--price ${override}: use KEY=NUMBER with KEY one of ${PRICE_KEYS.join(', ')}`);
    }
    prices = {
      ...prices,
      [key as PriceKey]: Number(value),
      sources: [...prices.sources, `--price ${override}`],
    };
  }
  return prices;
}
