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
