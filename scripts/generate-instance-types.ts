/**
 * Writes core/tuner/instance-type-table.ts, the facts `mountfleet tune --offline` and the agent's
 * fallback use, from an `ec2:DescribeInstanceTypes` snapshot:
 *
 *   npx tsx scripts/generate-instance-types.ts --from-file PAGE.json [PAGE.json ...] \
 *       --source "where the pages came from" --snapshot-date YYYY-MM-DD
 *   npx tsx scripts/generate-instance-types.ts --region us-east-1[,us-west-2,...]   (needs credentials)
 *
 * A file holds one `aws ec2 describe-instance-types` page ({"InstanceTypes": [...]}), a bare array of
 * them, or an object keyed by type name; `.gz` files are read too. Every type is kept, previous
 * generation included (the library's default types are among them), unless --current-generation-only.
 */
import { DescribeInstanceTypesCommand, type InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { ec2Client } from '../core/aws/clients';
import { UsageError } from '../core/common/errors';

export const DEFAULT_OUT = join(__dirname, '..', 'core', 'mountpoint', 'instance-type-table.ts');

/**
 * Families a fleet of this project's users is expected to run (training, HPC, media, the library's
 * defaults): the header names those the snapshot lacks, so a thin source does not go unnoticed.
 */
// prettier-ignore
export const EXPECTED_FAMILIES = [
  'c6i', 'c7gn', 'c7i', 'c8g', 'g5', 'g6', 'g6e', 'hpc7a', 'hpc7g', 'i4i', 'i7ie', 'inf2', 'm5', 'm6a',
  'm6i', 'm7g', 'm7i', 'm8g', 'p4d', 'p5', 'p5e', 'p5en', 'p6-b200', 'r7i', 'r8g', 't3', 'trn1', 'trn1n',
  'trn2',
];

export interface SnapshotInfo {
  /** Where the pages came from, e.g. a repository, path and commit. */
  readonly source: string;
  /** When the snapshot was taken (YYYY-MM-DD or YYYY-MM). */
  readonly date: string;
}

/** One type's facts, in the column order of the generated table. */
export type TableRow = [
  name: string,
  architecture: 'x86_64' | 'arm64',
  vCpus: number,
  memoryMiB: number,
  networkCards: number | [baselineGbps: number, peakGbps: number][],
  baselineGbps: number,
  peakGbps: number,
  instanceStore: [disks: number, diskSizeGB: number, nvme: boolean] | null,
  networkPerformance: string,
  flags: string,
];

/** The DescribeInstanceTypes entries in one file, whatever shape it has. */
export function entriesOf(json: unknown, file: string): InstanceTypeInfo[] {
  if (Array.isArray(json)) return json as InstanceTypeInfo[];
  if (json && typeof json === 'object') {
    const page = json as { InstanceTypes?: unknown };
    if (Array.isArray(page.InstanceTypes)) return page.InstanceTypes as InstanceTypeInfo[];
    const values = Object.values(json);
    if (values.every((v) => v && typeof v === 'object' && 'InstanceType' in v))
      return values as InstanceTypeInfo[];
  }
  throw new Error(
    `${file}: not DescribeInstanceTypes output (expected {"InstanceTypes": [...]}, an array, or an object keyed by type)`,
  );
}

export function readSnapshotFile(file: string): InstanceTypeInfo[] {
  const raw = readFileSync(file);
  const text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  return entriesOf(JSON.parse(text), file);
}

/** Why an entry is left out of the table; undefined when it is kept. */
function leftOutBecause(info: InstanceTypeInfo): string | undefined {
  const arch = info.ProcessorInfo?.SupportedArchitectures ?? [];
  if (arch.some((a) => a.endsWith('_mac'))) return 'mac (macOS; Mountpoint runs on Linux only)';
  if (!info.MemoryInfo?.SizeInMiB || !info.VCpuInfo?.DefaultVCpus) return 'no memory or vCPU facts';
  const cards = info.NetworkInfo?.NetworkCards ?? [];
  if (
    cards.length === 0 ||
    cards.some((c) => c.BaselineBandwidthInGbps === undefined || !c.PeakBandwidthInGbps)
  )
    return 'no per-card bandwidth facts';
  return undefined;
}

export function rowOf(info: InstanceTypeInfo): TableRow {
  const cards = [...info.NetworkInfo!.NetworkCards!]
    .sort((a, b) => (a.NetworkCardIndex ?? 0) - (b.NetworkCardIndex ?? 0))
    .map((c): [number, number] => [c.BaselineBandwidthInGbps!, c.PeakBandwidthInGbps!]);
  const uniform = cards.every(([b, p]) => b === cards[0][0] && p === cards[0][1]);
  const store = info.InstanceStorageInfo;
  const disk = store?.Disks?.[0];
  const arch = info.ProcessorInfo?.SupportedArchitectures ?? [];
  return [
    info.InstanceType!,
    arch.includes('arm64') ? 'arm64' : 'x86_64',
    info.VCpuInfo!.DefaultVCpus!,
    info.MemoryInfo!.SizeInMiB!,
    uniform ? cards.length : cards,
    cards[0][0],
    cards[0][1],
    disk?.Count && disk.SizeInGB
      ? [disk.Count, disk.SizeInGB, store?.NvmeSupport === 'required' || store?.NvmeSupport === 'supported']
      : null,
    info.NetworkInfo?.NetworkPerformance ?? '',
    (info.BurstablePerformanceSupported ? 'b' : '') + (info.CurrentGeneration === false ? 'p' : ''),
  ];
}

const familyOf = (name: string) => name.split('.')[0];

export interface Table {
  readonly rows: TableRow[];
  readonly leftOut: ReadonlyMap<string, string[]>;
  readonly missingFamilies: string[];
}

/** Deduplicates (a type appears once per Region in merged pages), filters and sorts by family, then size. */
export function buildTable(entries: InstanceTypeInfo[], currentGenerationOnly = false): Table {
  const byName = new Map<string, InstanceTypeInfo>();
  for (const e of entries) if (e.InstanceType) byName.set(e.InstanceType, e);
  const leftOut = new Map<string, string[]>();
  const rows: TableRow[] = [];
  for (const info of byName.values()) {
    if (currentGenerationOnly && info.CurrentGeneration === false) continue;
    const why = leftOutBecause(info);
    if (why) leftOut.set(why, [...(leftOut.get(why) ?? []), info.InstanceType!]);
    else rows.push(rowOf(info));
  }
  rows.sort(
    (a, b) =>
      familyOf(a[0]).localeCompare(familyOf(b[0])) || a[2] - b[2] || a[3] - b[3] || a[0].localeCompare(b[0]),
  );
  const families = new Set(rows.map((r) => familyOf(r[0])));
  return { rows, leftOut, missingFamilies: EXPECTED_FAMILIES.filter((f) => !families.has(f)) };
}

/** The generated module's text, formatted with the repository's prettier settings. */
export async function renderTable(table: Table, snapshot: SnapshotInfo): Promise<string> {
  const current = table.rows.filter((r) => !r[9].includes('p')).length;
  const leftOut = [...table.leftOut].map(([why, names]) => `${names.length} ${why}`).join('; ') || 'none';
  const lines = [
    '// Generated by scripts/generate-instance-types.ts: do not edit, regenerate (README, "mountfleet tune").',
    `// Snapshot: ${snapshot.source}, taken ${snapshot.date}.`,
    `// ${table.rows.length} instance types: ${current} current generation, ${table.rows.length - current} previous generation.`,
    `// Left out: ${leftOut}.`,
    `// Expected families absent from the snapshot: ${table.missingFamilies.join(', ') || 'none'}.`,
    '',
    'export const INSTANCE_TYPE_SNAPSHOT = ' +
      JSON.stringify({ source: snapshot.source, date: snapshot.date, types: table.rows.length }) +
      ';',
    '',
    '/**',
    ' * [type, architecture, vCPUs, memory MiB, network cards, baseline Gbps, peak Gbps, instance store,',
    ' * NetworkPerformance, flags]. Bandwidth is per card (card 0); network cards is a count when every card',
    ' * is alike, else [baseline, peak] per card. Instance store: [disks, GB each, NVMe]. Flags: b = burstable',
    ' * (CPU credits), p = previous generation.',
    ' */',
    'export type InstanceTypeRow = readonly [',
    '  string,',
    "  'x86_64' | 'arm64',",
    '  number,',
    '  number,',
    '  number | readonly (readonly [number, number])[],',
    '  number,',
    '  number,',
    '  readonly [number, number, boolean] | null,',
    '  string,',
    '  string,',
    '];',
    '',
    'export const INSTANCE_TYPE_ROWS: readonly InstanceTypeRow[] = [',
    ...table.rows.map((r) => `  ${JSON.stringify(r)},`),
    '];',
    '',
  ];
  // Loaded here, not with the module: prettier's entry point needs dynamic import(), which jest lacks.
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(DEFAULT_OUT)) ?? {};
  return prettier.format(lines.join('\n'), { ...options, parser: 'typescript' });
}

/** Every page of DescribeInstanceTypes in each Region (credentials and endpoints from the SDK's chain). */
export async function describeAll(
  regions: string[],
  currentGenerationOnly: boolean,
): Promise<InstanceTypeInfo[]> {
  const all: InstanceTypeInfo[] = [];
  for (const region of regions) {
    const ec2 = ec2Client({ region });
    let NextToken: string | undefined;
    do {
      const page = await ec2.send(
        new DescribeInstanceTypesCommand({
          MaxResults: 100,
          NextToken,
          ...(currentGenerationOnly ? { Filters: [{ Name: 'current-generation', Values: ['true'] }] } : {}),
        }),
      );
      all.push(...(page.InstanceTypes ?? []));
      NextToken = page.NextToken;
    } while (NextToken);
    ec2.destroy();
  }
  return all;
}

const USAGE =
  'usage: generate-instance-types (--from-file FILE... --source TEXT --snapshot-date YYYY-MM-DD | --region R[,R...]) [--current-generation-only] [--out FILE]';

export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'from-file': { type: 'string', multiple: true },
        region: { type: 'string' },
        source: { type: 'string' },
        'snapshot-date': { type: 'string' },
        'current-generation-only': { type: 'boolean', default: false },
        out: { type: 'string', default: DEFAULT_OUT },
      },
    });
    // `--from-file a.json b.json`: the files after the first arrive as positionals.
    const files = [...(values['from-file'] ?? []), ...positionals];
    const regions = (values.region ?? '').split(',').filter(Boolean);
    if (Boolean(files.length) === Boolean(regions.length))
      throw new UsageError('give either --from-file FILE... or --region R (not both)');
    let snapshot: SnapshotInfo;
    if (files.length) {
      if (!values.source) throw new UsageError('--from-file needs --source, e.g. "repository path@commit"');
      if (!/^\d{4}-\d{2}(-\d{2})?$/.test(values['snapshot-date'] ?? ''))
        throw new UsageError('--from-file needs --snapshot-date YYYY-MM-DD (when the pages were taken)');
      snapshot = { source: values.source, date: values['snapshot-date']! };
    } else {
      snapshot = {
        source: values.source ?? `ec2:DescribeInstanceTypes in ${regions.join(', ')}`,
        date: new Date().toISOString().slice(0, 10),
      };
    }
    const currentOnly = values['current-generation-only']!;
    const entries = files.length ? files.flatMap(readSnapshotFile) : await describeAll(regions, currentOnly);
    const table = buildTable(entries, currentOnly);
    if (table.rows.length === 0) throw new Error('the snapshot holds no usable instance type');
    writeFileSync(values.out!, await renderTable(table, snapshot));
    process.stderr.write(
      `${values.out}: ${table.rows.length} types` +
        (table.missingFamilies.length
          ? `; expected families absent: ${table.missingFamilies.join(', ')}`
          : '') +
        '\n',
    );
    return 0;
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`generate-instance-types: ${(err as Error).message}\n${usage ? `${USAGE}\n` : ''}`);
    return usage ? 2 : 1;
  }
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
