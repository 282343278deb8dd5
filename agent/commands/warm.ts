/**
 * `mountfleet warm`: reads a data set through its mount before a job so Mountpoint's caches hold it (the
 * local cache of this instance; the shared Express cache of the whole zone). The work lives in
 * core/measure (warmPath).
 */
import { resolve } from 'node:path';
import { EXIT_STATUS } from '../../core/common';
import { agentPaths } from '../../core/contract';
import { type WarmProgress, type WarmReport, warmPath } from '../../core/measure';
import { parseWholeNumber } from '../args';
import type { RegisterCommand } from '../command';
import { mb, printJson, s3Phrase } from '../output';
import { interruptible } from '../stop-signals';

interface WarmFlags {
  path: string;
  manifest?: string;
  parallel: string;
  json?: boolean;
}

const say = (line: string) => process.stderr.write(`warm: ${line}\n`);

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('warm')
    .description(
      "fill a mount's caches before a job: read every file under --path (or those --manifest lists) through the mount, " +
        'in parallel; says whether the shared Express cache makes it serve the whole zone',
    )
    .requiredOption('--path <dir>', 'the mounted data set')
    .option('--manifest <file>', 'warm only these files: one path a line, relative to --path')
    .option('--parallel <n>', 'files read at once', '16')
    .option('--json', 'print the result as one JSON document')
    .action(async (flags: WarmFlags) => {
      const parallel = parseWholeNumber('--parallel', flags.parallel, { min: 1, max: 1024 });
      const progress = progressPrinter();
      const report = await warmPath(
        { path: resolve(flags.path), manifest: flags.manifest, parallel, runDir: agentPaths().runDir },
        {
          onS3NotCounted: (reason) => say(`S3 requests not counted: ${reason}`),
          onNotes: (notes) => notes.forEach(say),
          onProgress: progress.update,
          onFailed: (f) => say(`${f.path}: ${f.error}`),
          stoppable: (read) =>
            interruptible('\nmountfleet warm: stopping; what is read stays cached', (signal) =>
              read(signal).finally(progress.end),
            ),
        },
      );
      if (flags.json) printJson(report);
      else process.stdout.write(`${resultLine(report)}\n`);
      ctx.exitCode = !report.complete
        ? EXIT_STATUS.interrupted
        : report.failed.length > 0
          ? EXIT_STATUS.failure
          : 0;
    });
};

function resultLine(r: WarmReport): string {
  return (
    `warmed ${r.files} files, ${mb(r.bytes)} MB in ${r.seconds.toFixed(1)} s ` +
    `(${r.megabytesPerSecond.toFixed(1)} MB/s)` +
    (r.s3 ? `, ${s3Phrase(r.s3)}` : '') +
    (r.failed.length ? `; ${r.failed.length} failed` : '') +
    (r.complete ? '' : `; stopped after ${r.files} of ${r.totalFiles}`)
  );
}

/** A progress line on stderr: rewritten in place on a terminal, every 5 s otherwise. */
function progressPrinter(): { update: (p: WarmProgress) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  const every = tty ? 200 : 5000;
  let last = 0;
  let shown = false;
  const line = (p: WarmProgress) =>
    `warm: ${p.files}/${p.totalFiles} files, ${mb(p.bytes)}/${mb(p.totalBytes)} MB`;
  return {
    update: (p) => {
      const t = Date.now();
      if (t - last < every && p.files < p.totalFiles) return;
      last = t;
      shown = true;
      process.stderr.write(tty ? `\r${line(p)}` : `${line(p)}\n`);
    },
    end: () => {
      if (tty && shown) process.stderr.write('\n');
    },
  };
}
