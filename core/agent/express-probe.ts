/**
 * Is this zone's S3 Express cache bucket answering? One HeadBucket with a hard deadline: an aborted
 * request, not the socket timeout (which does not reliably cut a response that never comes), decides.
 * `cancel` (the agent stopping) ends it at once.
 */
import { HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { systemClock, type Clock } from '../common';

export interface ProbeResult {
  readonly healthy: boolean;
  readonly latencyMs: number;
  /** "200 in 12 ms", "timed out after 1500 ms", "NoSuchBucket: ..." */
  readonly detail: string;
}

export async function probeExpressBucket(
  client: S3Client,
  bucket: string,
  timeoutMs: number,
  clock: Clock = systemClock,
  cancel?: AbortSignal,
): Promise<ProbeResult> {
  const started = clock.now();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const cancelled = () => abort.abort();
  cancel?.addEventListener('abort', cancelled, { once: true });
  if (cancel?.aborted) abort.abort();
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: abort.signal });
    const latencyMs = clock.now() - started;
    return { healthy: true, latencyMs, detail: `HeadBucket ${bucket} answered in ${latencyMs} ms` };
  } catch (e) {
    const latencyMs = clock.now() - started;
    const detail = cancel?.aborted
      ? `HeadBucket ${bucket} cancelled`
      : abort.signal.aborted
        ? `HeadBucket ${bucket} timed out after ${timeoutMs} ms`
        : `HeadBucket ${bucket} failed: ${(e as Error).name}${(e as Error).message ? `: ${(e as Error).message}` : ''}`;
    return { healthy: false, latencyMs, detail };
  } finally {
    clearTimeout(timer);
    cancel?.removeEventListener('abort', cancelled);
  }
}
