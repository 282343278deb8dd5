/**
 * `mountfleet plan`: burst credit and cost of a scratch workload on EFS One Zone (bursting, elastic)
 * versus EBS gp3. The model lives in core/plan; this file only reads flags and prints.
 */
import { Option } from 'commander';
import { parsePositive } from '../args';
import { UsageError } from '../../core/common';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';
import {
  renderPlan,
  computePlan,
  PRESETS,
  PriceError,
  PRICE_KEYS,
  resolvePrices,
  parseStep,
  readWorkloadFile,
  WorkloadError,
  type InputSpec,
  type Step,
} from '../../core/plan';
import { GIB, parseBytes, parseDuration, parseMbps, UnitError } from '../../core/common';
import { compareWithRun, readRunSummary, renderAgainst, SummaryError } from '../../core/scratch';

interface PlanOptions {
  preset?: string;
  workload?: string;
  inputSize?: string;
  duration?: string;
  bitrate?: string;
  step: string[];
  runTime?: string;
  region: string;
  prices?: string;
  price: string[];
  atBitrate?: string;
  against?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export const register: RegisterCommand = (program) => {
  program
    .command('plan')
    .description(
      'burst-credit and cost plan for a scratch workload: EFS One Zone (bursting, elastic) vs EBS gp3',
    )
    .addOption(new Option('--preset <name>', 'a named step list').choices(Object.keys(PRESETS)))
    .option(
      '--workload <file>',
      'JSON workload: {"input":{...},"steps":[{"name","read","write","time"}],"runTime"}',
    )
    .option('--input-size <size>', 'input size, e.g. 30.12GiB')
    .option('--duration <duration>', 'input duration, e.g. 30m')
    .option('--bitrate <rate>', 'input bit rate, e.g. 147Mbps')
    .option(
      '--step <spec>',
      'a step NAME:read=Q,write=Q[,time=DURATION]; Q is a multiple of the input (2), a bit rate (5Mbps) or a size (1GiB); repeatable, added after the preset/workload steps',
      collect,
      [],
    )
    .option('--run-time <duration>', 'wall time of the whole run, e.g. 54m59s')
    .option('--region <region>', 'price table to use', process.env.AWS_REGION ?? 'us-east-1')
    .option('--prices <file>', 'JSON price table replacing the built-in one (same fields as --json "prices")')
    .option('--price <key=value>', `override one price (${PRICE_KEYS.join(', ')}); repeatable`, collect, [])
    .option(
      '--at-bitrate <list>',
      "input bit rates for the exhaustion table, e.g. 50,147,503 (default: the input's)",
    )
    .option(
      '--against <summary>',
      "a run's summary (`scratch run --summary FILE`): the plan's metered I/O and credit beside what it measured; its run time when --run-time is not given",
    )
    .option('--json', 'print the plan as one JSON document')
    .addHelpText(
      'after',
      '\nExample (a 30-minute ProRes 422 master encoded to a six-rendition H.264 ladder, timed on EFS in Tokyo):\n' +
        '  mountfleet plan --preset encode-ladder --input-size 30.12GiB --duration 30m --run-time 54m59s \\\n' +
        '    --region ap-northeast-1 --at-bitrate 50,147,503',
    )
    .action((opts: PlanOptions) => {
      try {
        const fromFile = opts.workload ? readWorkloadFile(opts.workload) : undefined;
        const input: InputSpec = {
          ...fromFile?.input,
          ...(opts.inputSize !== undefined
            ? { gib: parsePositive('--input-size', opts.inputSize, parseBytes) / GIB }
            : {}),
          ...(opts.duration !== undefined
            ? { durationSeconds: parsePositive('--duration', opts.duration, parseDuration) }
            : {}),
          ...(opts.bitrate !== undefined
            ? { bitrateMbps: parsePositive('--bitrate', opts.bitrate, parseMbps) }
            : {}),
        };
        const steps: Step[] = [
          ...(opts.preset ? PRESETS[opts.preset].steps : []),
          ...(fromFile?.steps ?? []),
          ...opts.step.map(parseStep),
        ];
        const run = opts.against !== undefined ? readRunSummary(opts.against) : undefined;
        const runSeconds =
          opts.runTime !== undefined
            ? parsePositive('--run-time', opts.runTime, parseDuration)
            : (fromFile?.runSeconds ?? run?.seconds ?? undefined);
        if (runSeconds === undefined) throw new WorkloadError('give the run time (--run-time), e.g. 55m');
        const prices = resolvePrices({ region: opts.region, file: opts.prices, overrides: opts.price });
        const atBitratesMbps = opts.atBitrate
          ?.split(',')
          .map((r) => parsePositive('--at-bitrate', r, parseMbps));
        const plan = computePlan({ input, steps, runSeconds }, prices, { atBitratesMbps });
        const against = run && compareWithRun(plan, run);
        if (opts.json) printJson(against ? { ...plan, against } : plan);
        else process.stdout.write(renderPlan(plan) + (against ? renderAgainst(against, opts.against!) : ''));
      } catch (err) {
        if (
          err instanceof WorkloadError ||
          err instanceof PriceError ||
          err instanceof UnitError ||
          err instanceof SummaryError
        ) {
          throw new UsageError(err.message);
        }
        throw err;
      }
    });
};
