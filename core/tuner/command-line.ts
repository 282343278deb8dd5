/**
 * Mountpoint's command line, rendered from typed options. Every flag carries the first Mountpoint
 * release that has it (CHANGELOG / doc/CONFIGURATION.md); a flag newer than the pinned release is left
 * out and reported, so the rendered line is always one the installed `mount-s3` accepts.
 */

export type MetadataTtl = number | 'indefinite' | 'minimal';

export interface MountpointOptions {
  readonly bucket: string;
  readonly mountPoint: string;
  readonly prefix?: string;
  readonly region?: string;
  readonly expectedBucketOwner?: string;
  readonly readOnly?: boolean;
  readonly allowDelete?: boolean;
  readonly allowOverwrite?: boolean;
  readonly allowOther?: boolean;
  readonly maximumThroughputGbps?: number;
  readonly memoryTargetMiB?: number;
  /** `--read-part-size`, in bytes. */
  readonly readPartSizeBytes?: number;
  readonly cacheDirectory?: string;
  readonly maxCacheSizeMiB?: number;
  readonly metadataTtl?: MetadataTtl;
  readonly cacheXzBucket?: string;
  readonly bind?: readonly string[];
  readonly otlpEndpoint?: string;
  /** Seconds between OTLP exports; only with otlpEndpoint (Mountpoint requires it). */
  readonly otlpExportIntervalSeconds?: number;
  readonly foreground?: boolean;
}

/** First release with each flag we render. */
export const FLAG_FIRST_VERSION = {
  '--prefix': '1.0.0',
  '--region': '1.0.0',
  '--expected-bucket-owner': '1.0.0',
  '--read-only': '1.0.0',
  '--allow-delete': '1.0.0',
  '--allow-overwrite': '1.4.0',
  '--allow-other': '1.0.0',
  '--maximum-throughput-gbps': '1.0.0',
  '--memory-target': '1.24.0',
  '--read-part-size': '1.8.0',
  '--cache': '1.2.0',
  '--max-cache-size': '1.2.0',
  '--metadata-ttl': '1.2.0',
  '--cache-xz': '1.11.0',
  '--bind': '1.9.0',
  '--otlp-endpoint': '1.21.0',
  '--otlp-export-interval': '1.21.0',
  '--foreground': '1.0.0',
} as const;
export type RenderedFlag = keyof typeof FLAG_FIRST_VERSION;

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

interface RenderedCommandLine {
  /** Arguments after the program name: flags, then BUCKET DIRECTORY as Mountpoint's usage shows. */
  readonly args: string[];
  /** Flags left out because the pinned release predates them. */
  readonly omitted: { flag: RenderedFlag; since: string }[];
  /** The same flags, each with its value (if any): for renderings in another syntax (the CSI driver's). */
  readonly flags: { flag: RenderedFlag; value?: string }[];
}

export function renderCommandLine(o: MountpointOptions, version: string): RenderedCommandLine {
  const args: string[] = [];
  const omitted: { flag: RenderedFlag; since: string }[] = [];
  const flags: { flag: RenderedFlag; value?: string }[] = [];
  const add = (flag: RenderedFlag, value?: string | number) => {
    const since = FLAG_FIRST_VERSION[flag];
    if (compareVersions(version, since) < 0) {
      if (!omitted.some((x) => x.flag === flag)) omitted.push({ flag, since });
      return;
    }
    args.push(flag);
    if (value !== undefined) args.push(String(value));
    flags.push(value === undefined ? { flag } : { flag, value: String(value) });
  };
  if (o.foreground) add('--foreground');
  if (o.region) add('--region', o.region);
  if (o.expectedBucketOwner) add('--expected-bucket-owner', o.expectedBucketOwner);
  if (o.prefix) add('--prefix', o.prefix);
  if (o.readOnly) add('--read-only');
  if (o.allowOverwrite) add('--allow-overwrite');
  if (o.allowDelete) add('--allow-delete');
  if (o.allowOther) add('--allow-other');
  if (o.maximumThroughputGbps !== undefined) add('--maximum-throughput-gbps', o.maximumThroughputGbps);
  if (o.memoryTargetMiB !== undefined) add('--memory-target', o.memoryTargetMiB);
  if (o.readPartSizeBytes !== undefined) add('--read-part-size', o.readPartSizeBytes);
  for (const iface of o.bind ?? []) add('--bind', iface);
  if (o.cacheDirectory) add('--cache', o.cacheDirectory);
  if (o.cacheDirectory && o.maxCacheSizeMiB !== undefined) add('--max-cache-size', o.maxCacheSizeMiB);
  if (o.metadataTtl !== undefined) add('--metadata-ttl', o.metadataTtl);
  if (o.cacheXzBucket) add('--cache-xz', o.cacheXzBucket);
  if (o.otlpEndpoint) add('--otlp-endpoint', o.otlpEndpoint);
  if (o.otlpEndpoint && o.otlpExportIntervalSeconds !== undefined)
    add('--otlp-export-interval', o.otlpExportIntervalSeconds);
  args.push(o.bucket, o.mountPoint);
  return { args, omitted, flags };
}

/** Quotes an argument for a systemd ExecStart= line or a shell, only when needed. */
export function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, '\\$1')}"`;
}
