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
