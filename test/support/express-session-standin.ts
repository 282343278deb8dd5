/**
 * STAND-IN for S3 Express One Zone's CreateSession, which moto does not have. Added as a rule to the
 * fault proxy in front of moto: it answers every `?session` request with fixed session credentials and
 * passes everything else on, so a `--x-s3`-named ordinary moto bucket serves as the Express cache.
 * Mountpoint's client (the CRT) sends CreateSession as `GET /?session` to the endpoint, and signs the
 * cache requests with the session (`sigv4-s3express`), which moto does not check.
 */
import type { FaultProxy } from './fault-proxy';

export function answerExpressCreateSession(proxy: FaultProxy): number {
  const expiration = new Date(Date.now() + 6 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  return proxy.addRule({
    service: 's3',
    match: (request) => request.method === 'GET' && request.query.has('session'),
    fault: {
      kind: 'respond',
      status: 200,
      contentType: 'application/xml',
      body:
        '<?xml version="1.0" encoding="UTF-8"?>' +
        '<CreateSessionResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Credentials>' +
        '<SessionToken>standin-session-token</SessionToken><SecretAccessKey>standin-secret</SecretAccessKey>' +
        `<AccessKeyId>standin-access-key</AccessKeyId><Expiration>${expiration}</Expiration>` +
        '</Credentials></CreateSessionResult>',
    },
  });
}

/**
 * STAND-IN for S3 Express keeping and returning a block's checksum, where moto differs from S3. Mountpoint
 * writes each shared-cache block with `x-amz-checksum-crc32c` (a header or a trailer) and, on a read,
 * refuses a block whose GET does not return it (every read is then a miss). moto keeps a checksum only when
 * the PUT also names its algorithm (`x-amz-sdk-checksum-algorithm`, which the AWS SDKs send and the CRT does
 * not), and returns it only for `x-amz-checksum-mode: ENABLED` in capitals (the CRT sends `enabled`). Adds
 * and rewrites those two headers on requests to `--x-s3` buckets on the way to moto.
 */
export function keepExpressChecksums(proxy: FaultProxy): void {
  const toExpress = (path: string) => /^\/[^/]+--x-s3\//.test(path);
  proxy.addHeaderRule({
    match: (request) =>
      request.method === 'PUT' &&
      toExpress(request.path) &&
      (request.headers['x-amz-checksum-crc32c'] !== undefined ||
        String(request.headers['x-amz-trailer'] ?? '').includes('x-amz-checksum-crc32c')) &&
      request.headers['x-amz-sdk-checksum-algorithm'] === undefined,
    headers: { 'x-amz-sdk-checksum-algorithm': 'CRC32C' },
  });
  proxy.addHeaderRule({
    match: (request) =>
      request.method === 'GET' &&
      toExpress(request.path) &&
      String(request.headers['x-amz-checksum-mode'] ?? '').toUpperCase() === 'ENABLED',
    headers: { 'x-amz-checksum-mode': 'ENABLED' },
  });
}
