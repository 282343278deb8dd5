/** `mountfleet bench read`: read throughput of a mounted path (small parallel, large sequential, epochs). */
import { parseBytes } from '../../core/common';
import { benchRead } from '../../core/measure';
import { parsePositive, parseWholeNumber } from '../args';
import type { RegisterCommand } from '../command';
import { mib, printJson } from '../output';

interface ReadFlags {
  path: string;
  concurrency: string;
  epochs: string;
  largeMinSize: string;
  json?: boolean;
}

export const register: RegisterCommand = (bench) => {
  bench
    .command('read')
    .description(
      'read throughput of a mounted path: small files in parallel, large files sequentially, per epoch',
    )
    .requiredOption('--path <dir>', 'directory to read (a Mountpoint mount, EFS, local disk)')
    .option('--concurrency <n>', 'small files read at once', '32')
    .option('--epochs <n>', 'passes over the files', '2')
    .option('--large-min-size <size>', 'files this large or larger are read sequentially', '8MiB')
    .option('--json', 'print the results as one JSON document')
    .action(async (flags: ReadFlags) => {
      const concurrency = parseWholeNumber('--concurrency', flags.concurrency, { min: 1, max: 1024 });
      const epochs = parseWholeNumber('--epochs', flags.epochs, { min: 1, max: 1000 });
      const largeMinBytes = parsePositive('--large-min-size', flags.largeMinSize, parseBytes);
      const resultsTo = flags.json ? process.stderr : process.stdout;
      const results = await benchRead({
        path: flags.path,
        concurrency,
        epochs,
        largeMinBytes,
        onResult: (r) =>
          resultsTo.write(
            `epoch ${r.epoch} ${r.scenario.padEnd(16)} ${r.files} files, ${mib(r.bytes)} MiB ` +
              `in ${r.seconds.toFixed(3)} s: ${r.filesPerSecond.toFixed(0)} files/s, ${r.mibPerSecond.toFixed(1)} MiB/s\n`,
          ),
      });
      if (flags.json) printJson({ path: flags.path, concurrency, results });
    });
};
