/**
 * How the `scratch` subcommands speak: one `mountfleet scratch: …` line on stderr per message (their refusals
 * too: agent/commands/scratch.ts names the speaker for agent/cli.ts).
 */

/** One line on stderr, as scratch says everything that is not its result. */
export const say = (line: string) => process.stderr.write(`mountfleet scratch: ${line}\n`);
