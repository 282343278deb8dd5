/**
 * The `mountfleet` command line. Each command lives in agent/commands/<name>.ts and exports a
 * `register(program, ctx)` function (agent/command.ts) called here. Results (tables, reports) go to stdout, `--json` as one
 * JSON document; progress and logs go to stderr.
 */
import { Command, CommanderError, Help } from 'commander';
import { EXIT_STATUS, MountfleetError } from '../core/common';
import { VERSION } from '../core/contract';
import { speakerOf, type CliContext, type RegisterCommand } from './command';
import { register as registerBatch } from './commands/batch';
import { register as registerBench } from './commands/bench';
import { register as registerDown } from './commands/down';
import { register as registerPlan } from './commands/plan';
import { register as registerReap } from './commands/reap';
import { register as registerScratch } from './commands/scratch';
import { register as registerShard } from './commands/shard';
import { register as registerStatus } from './commands/status';
import { register as registerTune } from './commands/tune';
import { register as registerUp } from './commands/up';
import { register as registerWarm } from './commands/warm';

// In the order `--help` lists them: on an instance first, then operators, then planning tools.
const COMMANDS: RegisterCommand[] = [
  registerUp,
  registerStatus,
  registerDown,
  registerWarm,
  registerTune,
  registerScratch,
  registerReap,
  registerBatch,
  registerPlan,
  registerBench,
  registerShard,
];

/**
 * A command whose own usage errors (unknown option or command, missing option or argument, bad choice) read
 * like every other usage error: `mountfleet tune: unknown option '--bogus'` and a pointer to that command's
 * --help, instead of commander's bare `error: …`. Subcommands are made by `createCommand`, so all of them are.
 */
class MountfleetCommand extends Command {
  override createCommand(name?: string): Command {
    return new MountfleetCommand(name);
  }

  override error(message: string, errorOptions?: { code?: string; exitCode?: number }): never {
    const path = commandPath(this);
    const text = message.replace(/^error: /, '');
    return super.error(`${path}: ${text}\n(run \`${path} --help\` for usage)`, errorOptions);
  }
}

export function buildProgram(ctx: CliContext): Command {
  const program = new MountfleetCommand('mountfleet')
    .description('Mountpoint for Amazon S3 fleets, S3 Express caches and self-cleaning EFS scratch')
    .version(VERSION, '-v, --version')
    .option('--debug', 'print the stack trace of a failure')
    .addHelpText(
      'after',
      '\nExit status: 0 success, 1 failure, 2 usage error (bad flag or value, missing Region or credentials).',
    )
    // Commander's help does not show which options are required; inherited by every subcommand.
    .configureHelp({
      optionDescription(option) {
        const text = Help.prototype.optionDescription.call(this, option);
        return option.mandatory ? `(required) ${text}` : text;
      },
    })
    .allowExcessArguments(false)
    .exitOverride();
  for (const register of COMMANDS) register(program, ctx);
  return program;
}

/** `mountfleet scratch run`: the command as typed, for messages. */
function commandPath(command: Command): string {
  return command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name();
}

/**
 * Parses argv and runs the chosen command; resolves to the process exit code: 0 success (or --help,
 * --version), 2 for commander's own usage errors (unknown flag, missing option or argument, bad choice), the
 * status a MountfleetError carries (core/common/errors.ts: the one base of mountfleet's errors, and the one
 * place they map to exit statuses), and 1 for any other failure. Each is printed as one line; a runtime
 * failure's stack trace only with --debug.
 */
export async function run(argv: string[]): Promise<number> {
  const ctx: CliContext = { exitCode: 0 };
  const program = buildProgram(ctx);
  let active = program.name();
  let speaker = active;
  program.hook('preAction', (_program, command) => {
    active = commandPath(command);
    speaker = speakerOf(command) ?? active;
  });
  try {
    await program.parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    // Commander has printed its message; it exits 1 for usage errors, which mean 2 here.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_STATUS.usage;
    const debug = program.opts<{ debug?: boolean }>().debug === true;
    // Mountfleet's own error says what happened and how the command ends; a refusal (usage, in use, a stop)
    // is the user's to act on and never gets a trace.
    if (err instanceof MountfleetError) {
      process.stderr.write(`${speaker}: ${err.message}\n`);
      if (debug && err.exitStatus === EXIT_STATUS.failure) process.stderr.write(`${err.stack}\n`);
      return err.exitStatus;
    }
    process.stderr.write(`${active}: ${err instanceof Error ? err.message : String(err)}\n`);
    if (debug && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return EXIT_STATUS.failure;
  }
}
