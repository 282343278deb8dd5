/**
 * core/instance/imds.ts reads at most 64 KiB of an answer: an endpoint that is not IMDS (a wrong
 * AWS_EC2_METADATA_SERVICE_ENDPOINT, something else on the address) cannot make the agent hold more.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InstanceMetadataClient } from '../../../core/instance/imds';

let server: Server;
let endpoint: string;
/** Bytes of the answer to the one path below, sent in 64 KiB chunks. */
let answerBytes = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method === 'PUT') return void res.writeHead(200).end('token');
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let left = answerBytes;
    const write = () => {
      while (left > 0 && !res.destroyed) {
        const part = chunk.subarray(0, Math.min(left, chunk.length));
        left -= part.length;
        if (!res.write(part)) return;
      }
      if (left <= 0) res.end();
    };
    res.on('drain', write);
    write();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('an answer over 64 KiB is refused at the byte that passes it, however long the request timeout', async () => {
  const imds = new InstanceMetadataClient({ endpoint, timeoutMs: 60_000, retries: 0 });
  try {
    answerBytes = 8 * 1024 * 1024;
    await expect(imds.get('latest/meta-data/instance-id')).rejects.toThrow(
      /IMDS answer to latest\/meta-data\/instance-id is over 65536 bytes/,
    );
    answerBytes = 64 * 1024; // at the cap: read
    expect(await imds.get('latest/meta-data/instance-id')).toHaveLength(64 * 1024);
  } finally {
    imds.close();
  }
});
