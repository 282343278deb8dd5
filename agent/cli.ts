/**
 * The `mountfleet` command line. Each command lives in agent/commands/<name>.ts and exports a
 * `register(program, ctx)` function called here. `--json` output is one JSON document on stdout;
 * human output and progress go to stderr.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../core/config';
import { VERSION } from '../core/version';
import { register as registerBench } from './commands/bench';
import { register as registerDown } from './commands/down';
import { register as registerPlan } from './commands/plan';
import { register as registerReap } from './commands/reap';
import { register as registerScratch } from './commands/scratch';
import { register as registerShard } from './commands/shard';
import { register as registerStatus } from './commands/status';
import { register as registerTune } from './commands/tune';
import { register as registerUp } from './commands/up';

/** Shared by all commands: a command's action sets `exitCode` to pass a status through. */
export interface CliContext {
  exitCode: number;
}

/** Prints `value` as the one pretty-printed JSON document a `--json` run writes on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export type RegisterCommand = (program: Command, ctx: CliContext) => void;

// In the order `--help` lists them: on an instance first, then operators, then planning tools.
const COMMANDS: RegisterCommand[] = [
  registerUp,
  registerStatus,
  registerDown,
  registerTune,
  registerScratch,
  registerReap,
  registerPlan,
  registerBench,
  registerShard,
];

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('mountfleet')
    .description('Mountpoint for Amazon S3 fleets, S3 Express caches and self-cleaning EFS scratch')
    .version(VERSION, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    .allowExcessArguments(false)
    .exitOverride();
  for (const register of COMMANDS) register(program, ctx);
  return program;
}

/** Parses argv and runs the chosen command; resolves to the process exit code. */
export async function run(argv: string[]): Promise<number> {
  const ctx: CliContext = { exitCode: 0 };
  try {
    await buildProgram(ctx).parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ConfigError) {
      process.stderr.write(`mountfleet: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
