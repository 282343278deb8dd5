/** `mountfleet tune --instance-type T [--json]`: the Mountpoint settings the agent would choose, and why. */
import { existsSync } from 'node:fs';
import { parseWholeNumber } from '../args';
import { UsageError } from '../../core/common';
import { canCallAws, profileOption, regionOption, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';
import { ec2Client } from '../../core/aws';
import { DEFAULT_AGENT_CONFIG_PATH, loadAgentConfig } from '../../core/contract';
import { DEFAULT_ROOT_FREE_GIB } from '../../core/tuner';
import { formatTuneReport, tuneCsiVolumes, tuneForInstanceType } from '../../core/instance';
import { addCsiOptions, csiRequest, printCsiManifests, type CsiOptions } from './tune-csi';

interface TuneOptions extends CsiOptions, AwsFlags {
  instanceType: string;
  config?: string;
  azId?: string;
  interfaces?: string;
  rootFreeGib: string;
  offline?: boolean;
  json?: boolean;
}

/** Largest root volume EBS allows (64 TiB), in GiB. */
const MAX_ROOT_FREE_GIB = 65536;

export const register: RegisterCommand = (program) => {
  const tune = program
    .command('tune')
    .description(
      'the Mountpoint settings the agent would choose for an instance type, with the reason for each',
    )
    .requiredOption('--instance-type <type>', 'EC2 instance type, e.g. p5.48xlarge')
    .option(
      '--config <file>',
      'agent config (default: MOUNTFLEET_CONFIG or /etc/mountfleet/agent.json when present, else an example)',
    )
    .option(
      '--az-id <id>',
      'Availability Zone ID whose Express bucket to use (default: the first configured)',
    )
    .option('--interfaces <list>', 'comma-separated interfaces for --bind, e.g. ens5,ens6 (multi-card types)')
    .option(
      '--root-free-gib <n>',
      'root volume free space when the type has no instance store',
      String(DEFAULT_ROOT_FREE_GIB),
    )
    .option(
      '--offline',
      'use the built-in instance-type table (a DescribeInstanceTypes snapshot) instead of the API',
    )
    .option('--json', 'one JSON document on stdout')
    .addOption(regionOption())
    .addOption(profileOption());
  // The --csi flags last: --help lists what every run of tune takes first.
  addCsiOptions(tune).action(async (opts: TuneOptions) => {
    const rootFreeGiB = parseWholeNumber('--root-free-gib', opts.rootFreeGib, {
      min: 0,
      max: MAX_ROOT_FREE_GIB,
    });
    const interfaces = opts.interfaces !== undefined ? parseInterfaces(opts.interfaces) : undefined;
    const configPath = opts.config ?? process.env.MOUNTFLEET_CONFIG ?? DEFAULT_AGENT_CONFIG_PATH;
    if (opts.csi) {
      const config = opts.config || existsSync(configPath) ? loadAgentConfig(configPath) : undefined;
      return printCsiManifests(await tuneCsiVolumes(csiRequest(opts, config, rootFreeGiB)), opts.json);
    }
    // The API is optional here (the built-in table answers for known types): without a Region or credentials
    // tune says so and uses the table, unless --region or --profile asked for the API explicitly.
    const online =
      !opts.offline &&
      (await canCallAws(opts, (missing) =>
        process.stderr.write(`mountfleet tune: ${missing}; using the built-in instance-type table\n`),
      ));
    const report = await tuneForInstanceType({
      instanceType: opts.instanceType,
      ...(opts.config || existsSync(configPath) ? { config: loadAgentConfig(configPath) } : {}),
      ...(opts.azId ? { azId: opts.azId } : {}),
      ...(interfaces ? { interfaces } : {}),
      rootFreeGiB,
      ...(online ? { ec2: ec2Client({ maxAttempts: 2, connectionTimeoutMs: 2000 }) } : {}),
    });
    if (opts.json) printJson(report);
    else process.stdout.write(formatTuneReport(report));
  });
};

/** Linux interface names: 1 to 15 bytes, no whitespace, "/" or ":" (and "," separates them here). */
const INTERFACE_NAME = /^[^\s/:,]{1,15}$/;

/** `--interfaces ens5,ens6`: every name present and plausible; `ens5,,ens6` or `ens5,` is a typo, not two names. */
function parseInterfaces(text: string): string[] {
  const names = text.split(',');
  const bad = names.find((name) => !INTERFACE_NAME.test(name) || name === '.' || name === '..');
  if (bad === undefined) return names;
  const problem = bad === '' ? 'has an empty name' : `"${bad}" is not an interface name`;
  throw new UsageError(
    `--interfaces "${text}": ${problem}; give names separated by single commas, e.g. --interfaces ens5,ens6`,
  );
}
