/**
 * The pinned moto emulator in server mode, from the project-local virtualenv (.venv, made by
 * scripts/setup.sh). Each server is started with PR_SET_PDEATHSIG (setpriv --pdeathsig) so it dies with
 * the process that started it, even when that process is SIGKILLed: no orphan after a run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports';

export const REPO_ROOT = join(__dirname, '..', '..');
export const MOTO_SERVER_BIN = join(REPO_ROOT, '.venv', 'bin', 'moto_server');

export class MotoServer {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Starts moto on a free loopback port and waits until it answers. */
  static async start(
    options: { port?: number; timeoutMs?: number; ownProcessGroup?: boolean } = {},
  ): Promise<MotoServer> {
    if (!existsSync(MOTO_SERVER_BIN)) {
      throw new Error(
        `${MOTO_SERVER_BIN} not found: run scripts/setup.sh (npm test does) to install the emulator`,
      );
    }
    const port = options.port ?? (await freePort());
    const child = spawn(
      'setpriv',
      ['--pdeathsig', 'KILL', '--', MOTO_SERVER_BIN, '-H', '127.0.0.1', '-p', String(port)],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, MOTO_ALLOW_NONEXISTENT_REGION: 'false' },
        // A terminal's Ctrl-C then reaches the caller only, which still needs the emulator to clean up in;
        // --pdeathsig still ends it with the caller.
        detached: options.ownProcessGroup ?? false,
      },
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const server = new MotoServer(port, child);
    const deadline = Date.now() + (options.timeoutMs ?? 20000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}: ${stderr}`);
      try {
        const res = await fetch(`${server.endpoint}/moto-api/data.json`);
        if (res.ok) return server;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGKILL');
    throw new Error(`moto_server did not answer on port ${port} in time: ${stderr}`);
  }

  /** Wipes all emulated state. */
  async reset(): Promise<void> {
    const res = await fetch(`${this.endpoint}/moto-api/reset`, { method: 'POST' });
    if (!res.ok) throw new Error(`moto reset failed: ${res.status}`);
  }

  /** Stops the server and waits for the process to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

/** Resets a moto server at an endpoint (used by test workers, which do not own the process). */
export async function resetMoto(endpoint: string): Promise<void> {
  const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
  if (!res.ok) throw new Error(`moto reset failed: ${res.status}`);
}
