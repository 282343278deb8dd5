/**
 * STAND-IN — Mountpoint for Amazon S3 1.24.0's command line, transcribed from its clap definition
 * (mountpoint-s3-fs/src/cli.rs) so the stand-in accepts exactly what the real `mount-s3` accepts and
 * rejects the rest with clap-style errors. Kept separate from core/tuner/command-line.ts on
 * purpose: the agent's renderer is checked against this, not against itself.
 */

export interface ArgSpec {
  readonly long: string;
  readonly short?: string;
  /** Value name shown in errors, e.g. `<N>`; absent for switches. */
  readonly value?: string;
  readonly multiple?: boolean;
  /** Returns an error message for a bad value. */
  readonly validate?: (v: string) => string | undefined;
  readonly requires?: string;
  readonly conflicts?: readonly string[];
}

const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (v: string) => {
    if (!/^\d+$/.test(v)) return 'invalid digit found in string';
    const n = Number(v);
    return n < min || n > max
      ? `${n} is not in ${min}..${max === Number.MAX_SAFE_INTEGER ? '' : max + 1}`
      : undefined;
  };
const oneOf = (values: readonly string[]) => (v: string) =>
  values.includes(v) ? undefined : `possible values: ${values.join(', ')}`;
const ttl = (v: string) =>
  v === 'indefinite' || v === 'minimal' || /^\d+$/.test(v)
    ? undefined
    : "must be a number of seconds, 'indefinite' or 'minimal'";
const permBits = (v: string) =>
  !/^[0-7]+$/.test(v)
    ? 'must be a valid octal number'
    : parseInt(v, 8) > 0o777
      ? 'only user/group/other permissions are supported'
      : undefined;
export const bucketName = (v: string) => {
  if (v.length < 3 || v.length > 255) return 'bucket names must be 3-255 characters long';
  if (v.includes('s3://')) return 'bucket name should not be an s3:// URI';
  if (!/^[0-9a-zA-Z\-._]+$/.test(v) && !v.startsWith('arn:'))
    return 'bucket argument should be a valid bucket name(only letters, numbers, . and -) or a valid ARN';
  return undefined;
};

export const MOUNTPOINT_1_24_0_ARGS: readonly ArgSpec[] = [
  {
    long: 'prefix',
    value: '<PREFIX>',
    validate: (v) => (v.endsWith('/') ? undefined : "prefix must end with '/'"),
  },
  { long: 'region', value: '<REGION>' },
  { long: 'endpoint-url', value: '<ENDPOINT_URL>' },
  { long: 'force-path-style' },
  { long: 'transfer-acceleration' },
  { long: 'dual-stack' },
  { long: 'requester-pays' },
  { long: 'bucket-type', value: '<BUCKET_TYPE>', validate: oneOf(['general-purpose', 'directory']) },
  { long: 'no-sign-request' },
  { long: 'profile', value: '<PROFILE>' },
  { long: 'read-only' },
  { long: 'storage-class', value: '<STORAGE_CLASS>' },
  { long: 'allow-delete' },
  { long: 'allow-overwrite' },
  { long: 'incremental-upload' },
  { long: 'auto-unmount' },
  { long: 'allow-root' },
  { long: 'allow-other', conflicts: ['allow-root'] },
  { long: 'maximum-throughput-gbps', value: '<N>', validate: integer(1) },
  { long: 'max-threads', value: '<N>', validate: integer(1) },
  { long: 'memory-target', value: '<MiB>', validate: integer(512) },
  { long: 'part-size', value: '<SIZE>', validate: integer(1) },
  { long: 'read-part-size', value: '<SIZE>', validate: integer(1), conflicts: ['part-size'] },
  { long: 'write-part-size', value: '<SIZE>', validate: integer(1), conflicts: ['part-size'] },
  { long: 'uid', value: '<UID>', validate: integer(1, 2 ** 32 - 1) },
  { long: 'gid', value: '<GID>', validate: integer(1, 2 ** 32 - 1) },
  { long: 'dir-mode', value: '<DIR_MODE>', validate: permBits },
  { long: 'file-mode', value: '<FILE_MODE>', validate: permBits },
  { long: 'foreground', short: 'f' },
  { long: 'expected-bucket-owner', value: '<AWS_ACCOUNT_ID>' },
  { long: 'log-directory', short: 'l', value: '<DIRECTORY>' },
  { long: 'log-metrics' },
  { long: 'debug', short: 'd' },
  { long: 'debug-crt' },
  { long: 'no-log', conflicts: ['log-directory', 'debug', 'debug-crt', 'log-metrics'] },
  { long: 'cache', value: '<DIRECTORY>' },
  { long: 'metadata-ttl', value: '<SECONDS|indefinite|minimal>', validate: ttl },
  { long: 'negative-metadata-ttl', value: '<SECONDS|indefinite|minimal>', validate: ttl },
  { long: 'max-cache-size', value: '<MiB>', validate: integer(0), requires: 'cache' },
  { long: 'cache-xz', value: '<BUCKET>', validate: bucketName },
  { long: 'user-agent-prefix', value: '<PREFIX>' },
  { long: 'sse', value: '<SSE>', validate: oneOf(['aws:kms', 'aws:kms:dsse', 'AES256']) },
  {
    long: 'sse-kms-key-id',
    value: '<AWS_KMS_KEY_ARN>',
    requires: 'sse',
    validate: (v) =>
      v.startsWith('arn:') && v.includes(':key')
        ? undefined
        : 'KMS Key ARN is only accepted as a key identifier, Key Alias ARN is not accepted',
  },
  { long: 'upload-checksums', value: '<ALGORITHM>', validate: oneOf(['crc32c', 'off']) },
  { long: 'bind', value: '<NETWORK_INTERFACE>', multiple: true },
  { long: 'otlp-endpoint', value: '<OTLP_ENDPOINT>' },
  { long: 'otlp-export-interval', value: '<SECONDS>', validate: integer(1) },
];

export const USAGE = 'Usage: mount-s3 [OPTIONS] <BUCKET_NAME> <DIRECTORY>';

export class UsageError extends Error {}

export interface ParsedArgs {
  readonly bucket: string;
  readonly directory: string;
  /** long name → values (switches get ['true']). */
  readonly options: ReadonlyMap<string, string[]>;
  readonly help: boolean;
  readonly version: boolean;
}

const display = (s: ArgSpec) => `'--${s.long}${s.value ? ` ${s.value}` : ''}'`;

/** Parses like clap: `--x v`, `--x=v`, `-f`, `-l DIR`, `--` ends options; throws UsageError. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const options = new Map<string, string[]>();
  const positionals: string[] = [];
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') help = true;
    else if (arg === '-V' || arg === '--version') version = true;
    else if (arg.startsWith('-') && arg.length > 1) {
      const long = arg.startsWith('--');
      const [name, inline] = long ? splitOnce(arg.slice(2)) : [arg.slice(1), undefined];
      const spec = MOUNTPOINT_1_24_0_ARGS.find((s) => (long ? s.long === name : s.short === name));
      if (!spec) throw new UsageError(`unexpected argument '${long ? `--${name}` : arg}' found`);
      let value: string;
      if (spec.value) {
        const next = inline ?? argv[++i];
        if (next === undefined)
          throw new UsageError(`a value is required for ${display(spec)} but none was supplied`);
        const problem = spec.validate?.(next);
        if (problem) throw new UsageError(`invalid value '${next}' for ${display(spec)}: ${problem}`);
        value = next;
      } else {
        if (inline !== undefined)
          throw new UsageError(
            `unexpected value '${inline}' for '--${spec.long}' found; no more were expected`,
          );
        value = 'true';
      }
      if (options.has(spec.long) && !spec.multiple)
        throw new UsageError(`the argument ${display(spec)} cannot be used multiple times`);
      options.set(spec.long, [...(options.get(spec.long) ?? []), value]);
    } else positionals.push(arg);
  }
  if (help || version) return { bucket: '', directory: '', options, help, version };
  for (const spec of MOUNTPOINT_1_24_0_ARGS) {
    if (!options.has(spec.long)) continue;
    if (spec.requires && !options.has(spec.requires)) {
      const needed = MOUNTPOINT_1_24_0_ARGS.find((s) => s.long === spec.requires)!;
      throw new UsageError(
        `the following required arguments were not provided:\n  --${needed.long} ${needed.value ?? ''}`.trimEnd(),
      );
    }
    for (const other of spec.conflicts ?? []) {
      if (options.has(other))
        throw new UsageError(`the argument '--${spec.long}' cannot be used with '--${other}'`);
    }
  }
  if (positionals.length < 2) {
    const missing = ['<BUCKET_NAME>', '<DIRECTORY>'].slice(positionals.length);
    throw new UsageError(`the following required arguments were not provided:\n  ${missing.join('\n  ')}`);
  }
  if (positionals.length > 2) throw new UsageError(`unexpected argument '${positionals[2]}' found`);
  const bucketProblem = bucketName(positionals[0]);
  if (bucketProblem)
    throw new UsageError(`invalid value '${positionals[0]}' for '<BUCKET_NAME>': ${bucketProblem}`);
  return { bucket: positionals[0], directory: positionals[1], options, help, version };
}

function splitOnce(s: string): [string, string | undefined] {
  const i = s.indexOf('=');
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}
