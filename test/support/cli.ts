/** Runs the built `mountfleet` bundle (dist/agent/mountfleet.js) as a user would, capturing its output. */
import { spawn, type SpawnOptions } from 'node:child_process';
import { join } from 'node:path';
import { run } from '../../agent/cli';
import { REPO_ROOT } from './moto';

export const CLI_BUNDLE = join(REPO_ROOT, 'dist', 'agent', 'mountfleet.js');

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: string[], options: SpawnOptions & { input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BUNDLE, ...args], {
      cwd: REPO_ROOT,
      ...options,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin!.end(options.input ?? '');
  });
}

/** Runs the CLI in this process (faster than a spawn where the bundle itself is not under test). */
export async function runCliInProcess(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((c) => ((stdout += String(c)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
  try {
    return { code: await run(['node', 'mountfleet', ...args]), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
