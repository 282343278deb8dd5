/**
 * The Mountpoint install's downloads are streamed to disk and capped (core/agent/install-mountpoint.ts): a wrong or
 * hostile release server cannot fill the agent's memory or disk before gpg has looked at what it sent.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { download, installMountpoint, MAX_SIGNATURE_BYTES } from '../../../core/agent/install-mountpoint';

let server: Server;
let base: string;
let dir: string;

/** Writes `bytes` bytes in 16 KiB chunks, without a Content-Length (chunked), or declaring one. */
function send(res: ServerResponse, bytes: number, declare = false): void {
  res.writeHead(200, declare ? { 'content-length': String(bytes) } : {});
  const chunk = Buffer.alloc(16 * 1024, 0x2d);
  let left = bytes;
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
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-install-bounds-'));
  server = createServer((req, res) => {
    const url = req.url ?? '';
    if (url.endsWith('.rpm')) send(res, 1000);
    else if (url.endsWith('.rpm.asc'))
      send(res, 1024 * 1024); // 1 MiB "signature"
    else if (url === '/declared') send(res, 512 * 1024 * 1024, true);
    else if (url === '/chunked') send(res, 100 * 1024);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test('a signature file over its cap stops the install before gpg runs; nothing is installed', async () => {
  const installed: string[] = [];
  await expect(
    installMountpoint({
      version: '1.24.0',
      keyFingerprint: '8AEFE705EBE329C0948C75A66F1C3B3AEF4B030B',
      releaseUrl: base,
      keysUrl: `${base}/KEYS`,
      mountS3: join(dir, 'no-mount-s3-here'),
      architecture: 'x86_64',
      format: 'rpm',
      installPackage: async (file) => void installed.push(file),
    }),
  ).rejects.toThrow(new RegExp(`\\.rpm\\.asc: larger than ${MAX_SIGNATURE_BYTES} bytes, refused`));
  expect(installed).toEqual([]);
});

test('a download is refused by its Content-Length at once, or at the byte past the cap, with no more than the cap on disk', async () => {
  const file = join(dir, 'download');
  await expect(download(`${base}/declared`, file, 1024 * 1024)).rejects.toThrow(/larger than 1048576 bytes/);
  await expect(download(`${base}/chunked`, file, 64 * 1024)).rejects.toThrow(/larger than 65536 bytes/);
  expect(readFileSync(file).length).toBeLessThanOrEqual(64 * 1024);
  await download(`${base}/chunked`, file, 100 * 1024); // at the cap: whole
  expect(readFileSync(file).length).toBe(100 * 1024);
  await expect(download(`${base}/missing`, file, 1024)).rejects.toThrow(/HTTP 404/);
  expect(existsSync(file)).toBe(true);
});
