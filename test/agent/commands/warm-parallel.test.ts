/**
 * `warm --parallel N` has N reads in flight, beyond libuv's default 4 pool threads: the bundled agent sizes the
 * pool before anything uses it (agent/threadpool.ts). Run as a user runs it, from the bundle, on samples whose
 * reads stay in flight until the test lets them finish (test/support/held-fifos.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BUNDLE } from '../../support/cli';
import { HeldFifos } from '../../support/held-fifos';
import { until } from '../../support/mountpoint-rig';

const dir = mkdtempSync(join(tmpdir(), 'warm-parallel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('warm --parallel 8 has 8 reads in flight at once', async () => {
  const samples = new HeldFifos(dir, 8);
  const manifest = join(dir, 'manifest.txt');
  writeFileSync(manifest, samples.paths.map((f) => `${f}\n`).join(''));
  const child = spawn(
    process.execPath,
    [CLI_BUNDLE, 'warm', '--path', dir, '--manifest', manifest, '--parallel', '8', '--json'],
    {
      // Without a size of the caller's: the agent's own is what is tested.
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'UV_THREADPOOL_SIZE')),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let code: number | null | undefined;
  child.once('exit', (c) => (code = c));
  try {
    await until(`8 reads in flight at once (${stderr})`, () => samples.beingRead(child.pid!) === 8, 20_000);
  } finally {
    await until(
      `warm to end (${stderr})`,
      () => (samples.finishOpenedBy(child.pid!), code !== undefined),
      20_000,
    );
    samples.close();
  }
  expect({ code, files: (JSON.parse(stdout) as { files: number }).files }).toEqual({ code: 0, files: 8 });
});
