/**
 * The Spot notice reader `scratch run` polls every few seconds for the whole job.
 *
 * While no interruption is scheduled IMDS answers 404, and the SDK's MetadataService throws on a non-200
 * answer without reading its body, which keeps that connection open (and the process alive) until IMDS
 * closes it: one lingering socket per poll, and a finished `scratch run` that cannot exit for seconds.
 * Asking IMDS to close each connection after answering (`Connection: close`) frees them at once.
 */
import type { MetadataService } from '@aws-sdk/ec2-metadata-service';
import { metadataService, readSpotInstanceAction } from '../imds';
import type { SpotNotice } from './lifecycle';

export function spotNoticeReader(
  imds: MetadataService = metadataService(),
): () => Promise<SpotNotice | undefined> {
  const closing = {
    request: (path: string, options: { method?: string; headers?: Record<string, string> }) =>
      imds.request(path, { ...options, headers: { ...options.headers, connection: 'close' } }),
  } as MetadataService;
  return () => readSpotInstanceAction(closing);
}
