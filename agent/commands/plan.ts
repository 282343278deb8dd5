/**
 * `mountfleet plan`: burst credit and cost of a scratch workload on EFS One Zone (bursting, elastic)
 * versus EBS gp3 and S3 Files. The model lives in core/plan (planAndCompare), which with `--against` also reads
 * a run's summary and compares it. This file only reads flags and prints.
 */
import { Option } from 'commander';
import { GIB, parseBytes, parseDuration, parseMbps } from '../../core/common';
import {
  PRESETS,
  PRICE_KEYS,
  planAndCompare,
  renderAgainst,
  renderPlan,
  type PlanRequest,
} from '../../core/plan';
import { parsePositive } from '../args';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';

interface PlanFlags {
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
  readSize?: string;
  against?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export const register: RegisterCommand = (program) => {
  program
    .command('plan')
    .description(
      'burst-credit and cost plan for a scratch workload: EFS One Zone (bursting, elastic) vs EBS gp3 vs S3 Files',
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
      '--read-size <size>',
      "the job's read size, e.g. 64KiB (default 1MiB): S3 Files streams reads of 1 MiB or more from the bucket and charges smaller ones",
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
    .action((flags: PlanFlags) => {
      const { plan, against } = planAndCompare(planRequest(flags), flags.against);
      if (flags.json) printJson(against ? { ...plan, against: against.rows } : plan);
      else process.stdout.write(renderPlan(plan) + (against ? renderAgainst(against) : ''));
    });
};

function planRequest(flags: PlanFlags): PlanRequest {
  return {
    preset: flags.preset,
    workloadFile: flags.workload,
    input: {
      ...(flags.inputSize !== undefined
        ? { gib: parsePositive('--input-size', flags.inputSize, parseBytes) / GIB }
        : {}),
      ...(flags.duration !== undefined
        ? { durationSeconds: parsePositive('--duration', flags.duration, parseDuration) }
        : {}),
      ...(flags.bitrate !== undefined
        ? { bitrateMbps: parsePositive('--bitrate', flags.bitrate, parseMbps) }
        : {}),
    },
    steps: flags.step,
    runSeconds:
      flags.runTime !== undefined ? parsePositive('--run-time', flags.runTime, parseDuration) : undefined,
    prices: { region: flags.region, file: flags.prices, overrides: flags.price },
    atBitratesMbps: flags.atBitrate?.split(',').map((r) => parsePositive('--at-bitrate', r, parseMbps)),
    readBytes:
      flags.readSize !== undefined ? parsePositive('--read-size', flags.readSize, parseBytes) : undefined,
  };
}
