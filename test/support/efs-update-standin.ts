/**
 * STAND-IN for EFS `UpdateFileSystem`, which moto 5.2.5 does not implement (reference:
 * toolchain-and-emulators.md). It answers the call at the fault proxy, in front of the emulator: with the
 * file system's description as moto has it and the requested throughput mode (what EFS returns), or with
 * an error EFS documents for the call (`TooManyRequests` 429 within 24 h of the last mode change,
 * `IncorrectFileSystemLifeCycleState` 409 when the file system is not `available`). It records each
 * request body it answered, so a test checks what the guard asked for. Every other call goes to moto.
 */
import { DescribeFileSystemsCommand, type EFSClient } from '@aws-sdk/client-efs';
import type { FaultProxy } from './fault-proxy';

export interface UpdateFileSystemStandIn {
  /** The request bodies answered, oldest first. */
  readonly requests: ReadonlyArray<{ readonly ThroughputMode?: string }>;
}

export async function standInForUpdateFileSystem(
  proxy: FaultProxy,
  efs: EFSClient,
  fileSystemId: string,
  options: {
    readonly error?: { readonly status: number; readonly code: string };
    readonly times?: number;
  } = {},
): Promise<UpdateFileSystemStandIn> {
  const requests: Array<{ ThroughputMode?: string }> = [];
  const described = (await efs.send(new DescribeFileSystemsCommand({ FileSystemId: fileSystemId })))
    .FileSystems![0];
  const match = (r: { path: string; body?: string }) => {
    if (!r.path.endsWith(`/${fileSystemId}`)) return false;
    requests.push(JSON.parse(r.body || '{}') as { ThroughputMode?: string });
    return true;
  };
  proxy.addRule({
    service: 'efs',
    operation: 'UpdateFileSystem',
    match,
    times: options.times,
    fault: options.error
      ? { kind: 'error', status: options.error.status, code: options.error.code }
      : {
          kind: 'respond',
          status: 202,
          contentType: 'application/json',
          // The SDK serialises dates as epoch seconds in EFS's REST-JSON protocol.
          body: JSON.stringify({
            ...described,
            CreationTime: described.CreationTime!.getTime() / 1000,
            SizeInBytes: { Value: described.SizeInBytes?.Value ?? 0 },
            LifeCycleState: 'updating',
            ThroughputMode: 'elastic',
          }),
        },
  });
  return { requests };
}
