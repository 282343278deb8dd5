/** Entry point of the `mountfleet` command (bundled to dist/agent/mountfleet.js). */
import { run } from './cli';

hideSdkNodeVersionNotice();

run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mountfleet: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);

/**
 * The AWS SDK prints a 9-line NodeVersionSupportWarning under Node 20 the first time a client is made: its
 * releases after January 2027 will need Node 22. The bundle carries the SDK it was built with, so the notice
 * is for whoever builds mountfleet, not for the user of the command (docs/cli.md: supported Node versions).
 * Only that notice is dropped, in this process only: the environment jobs and Mountpoint inherit is unchanged.
 */
function hideSdkNodeVersionNotice(): void {
  const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('NodeVersionSupportWarning')) return;
    emitWarning(warning, ...rest);
  }) as typeof process.emitWarning;
}
