/**
 * How the `scratch` subcommands speak: one `mountfleet scratch: …` line on stderr per message, and a
 * subcommand's end, its exit status.
 */
import { MountfleetError } from '../../core/common';
import type { CliContext } from '../command';

/** One line on stderr, as scratch says everything that is not its result. */
export const say = (line: string) => process.stderr.write(`mountfleet scratch: ${line}\n`);

/**
 * Runs a subcommand and passes its exit status on. What stops one is said the way scratch has always said it,
 * `mountfleet scratch: …` (agent/cli.ts would name the subcommand), with the exit status the error carries;
 * any other error goes on to agent/cli.ts.
 */
export function scratchAction<A extends unknown[]>(ctx: CliContext, fn: (...args: A) => Promise<number>) {
  return async (...args: A) => {
    try {
      ctx.exitCode = await fn(...args);
    } catch (err) {
      if (!(err instanceof MountfleetError)) throw err;
      say(err.message);
      ctx.exitCode = err.exitStatus;
    }
  };
}
