import { spawn } from 'node:child_process';
import { CreateFileSystemCommand, DescribeFileSystemsCommand, EFSClient } from '@aws-sdk/client-efs';
import { MotoServer, REPO_ROOT } from './moto';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

describe('MotoServer', () => {
  it('starts on a free loopback port, keeps state until reset, and stops its process', async () => {
    const moto = await MotoServer.start();
    try {
      expect(moto.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const efs = new EFSClient({ region: 'us-east-1', endpoint: moto.endpoint, maxAttempts: 1 });
      await efs.send(new CreateFileSystemCommand({ CreationToken: 'one' }));
      expect((await efs.send(new DescribeFileSystemsCommand({}))).FileSystems).toHaveLength(1);
      await moto.reset();
      expect((await efs.send(new DescribeFileSystemsCommand({}))).FileSystems).toHaveLength(0);
      efs.destroy();
    } finally {
      await moto.stop();
    }
    expect(await waitUntil(() => !alive(moto.pid), 5000)).toBe(true);
  });

  it('dies with the process that started it, even after SIGKILL (no orphan emulator)', async () => {
    const child = spawn(
      process.execPath,
      [
        '--require',
        'tsx/cjs',
        '-e',
        `require('./test/support/moto').MotoServer.start().then((m) => { console.log(m.pid); setInterval(() => {}, 1000); });`,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pid = await new Promise<number>((resolve) =>
      child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    expect(alive(pid)).toBe(true);
    child.kill('SIGKILL');
    expect(await waitUntil(() => !alive(pid), 5000)).toBe(true);
  });
});
