/**
 * `mountfleet plan` from request to plan: the workload as the flags, a preset and a workload file describe
 * it together (the flags' input fields over the file's; the preset's steps, then the file's, then the
 * flags'), the region's prices with any overrides, then the model (model.ts). Bad input is a UsageError
 * (exit 2); a size, duration or bit rate in a step or the workload file that does not parse says so as the
 * unit's own parser does (UnitError).
 */
import { UsageError } from '../common';
import { computePlan, type PlanResult } from './model';
import { PRESETS } from './presets';
import { resolvePrices } from './prices';
import { parseStep, readWorkloadFile, type InputSpec } from './workload';

/** What `plan` was asked (its flags, read). */
export interface PlanRequest {
  /** A name of PRESETS: its steps come first. */
  readonly preset?: string;
  /** A JSON workload file (`--workload`): its input, steps and run time. */
  readonly workloadFile?: string;
  /** The input as the flags give it; each field given replaces the workload file's. */
  readonly input: InputSpec;
  /** `--step NAME:read=Q,write=Q[,time=DURATION]` specs, added after the preset's and the file's steps. */
  readonly steps: readonly string[];
  /** `--run-time`; else the workload file's, else `measuredRunSeconds`. */
  readonly runSeconds?: number;
  /** The run time of a measured run the plan is compared with (`--against`). */
  readonly measuredRunSeconds?: number;
  readonly prices: { readonly region: string; readonly file?: string; readonly overrides: readonly string[] };
  /** Input bit rates for the exhaustion table (default: the input's). */
  readonly atBitratesMbps?: readonly number[];
  /** The job's read size in bytes (`--read-size`, default 1 MiB): S3 Files charges reads below 1 MiB. */
  readonly readBytes?: number;
}

/** The plan of the request's workload. */
export function planWorkload(request: PlanRequest): PlanResult {
  const fromFile = request.workloadFile ? readWorkloadFile(request.workloadFile) : undefined;
  const steps = [
    ...(request.preset ? PRESETS[request.preset].steps : []),
    ...(fromFile?.steps ?? []),
    ...request.steps.map(parseStep),
  ];
  const runSeconds = request.runSeconds ?? fromFile?.runSeconds ?? request.measuredRunSeconds;
  if (runSeconds === undefined) throw new UsageError('give the run time (--run-time), e.g. 55m');
  const prices = resolvePrices(request.prices);
  const input = { ...fromFile?.input, ...request.input };
  return computePlan({ input, steps, runSeconds }, prices, {
    atBitratesMbps: request.atBitratesMbps,
    readBytes: request.readBytes,
  });
}
