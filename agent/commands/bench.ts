/**
 * `mountfleet bench`: measurements of S3 and of mounts, one subcommand each — `latency` (PUT/GET latency by
 * object size, agent/commands/bench-latency.ts), `read` (read throughput of a mounted path, bench-read.ts) and
 * `train` (a training input pipeline, bench-train.ts). The work lives in core/measure.
 */
import type { RegisterCommand } from '../command';
import { register as registerLatency } from './bench-latency';
import { register as registerRead } from './bench-read';
import { register as registerTrain } from './bench-train';

export const register: RegisterCommand = (program, ctx) => {
  const bench = program.command('bench').description('measure S3 request latency and mount read throughput');
  for (const registerSubcommand of [registerLatency, registerRead, registerTrain])
    registerSubcommand(bench, ctx);
};
