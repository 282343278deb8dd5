/**
 * Running the host's tools (mount, mdadm, mkfs, the package manager) from the agent: one seam, so tests
 * can record the command lines instead.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Runs a program; resolves to stdout, rejects with stderr in the message. */
export type CommandRunner = (file: string, args: readonly string[]) => Promise<string>;

export const execCommand: CommandRunner = async (file, args) => {
  try {
    const { stdout } = await promisify(execFile)(file, [...args], { encoding: 'utf8' });
    return stdout;
  } catch (e) {
    const err = e as Error & { stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${(err.stderr ?? '').trim() || err.message}`, {
      cause: e,
    });
  }
};
