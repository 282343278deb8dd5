/**
 * What every command module shares with the program that registers it: each of agent/commands/<name>.ts
 * exports a `register(program, ctx)` of this type, and agent/cli.ts calls them. Commands import this
 * module, never cli.ts.
 */
import type { Command } from 'commander';

/** Shared by all commands: a command's action sets `exitCode` to pass a status through. */
export interface CliContext {
  exitCode: number;
}

/** Adds a command to `program`, or a subcommand to its parent command (`bench latency` to `bench`). */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

const SPEAKERS = new WeakMap<Command, string>();

/**
 * The name a command's refusals begin with (`mountfleet scratch: …` for every scratch subcommand, as its
 * progress lines do); agent/cli.ts prints them. Without one, the command's path (`mountfleet scratch run`).
 */
export function speaksAs<C extends Command>(command: C, name: string): C {
  SPEAKERS.set(command, name);
  return command;
}

/** What a command's refusals begin with: its own speaksAs name, its nearest parent's, or undefined. */
export function speakerOf(command: Command): string | undefined {
  for (let c: Command | null = command; c; c = c.parent) {
    const name = SPEAKERS.get(c);
    if (name) return name;
  }
  return undefined;
}
