/** How commands write their results: `--json` as one JSON document on stdout; phrases several commands share. */
import type { S3Count } from '../core/mountpoint/agent-mount-metrics';

/** Prints `value` as the one pretty-printed JSON document a `--json` run writes on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `1234 S3 requests (GetObject 1200, HeadObject 34), 0 cache hits`. */
export function s3Phrase(s3: S3Count): string {
  const ops = Object.entries(s3.byOperation ?? {})
    .sort(([, a], [, b]) => b - a)
    .map(([op, n]) => `${op} ${n}`);
  return (
    `${s3.requests} S3 requests` +
    (ops.length ? ` (${ops.join(', ')})` : '') +
    (s3.errors ? `, ${s3.errors} failed` : '') +
    (s3.cacheHits !== undefined ? `, ${s3.cacheHits} cache hits` : '')
  );
}
