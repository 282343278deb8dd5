/** Entry point of the `mountfleet` command (bundled to dist/agent/mountfleet.js). */
import { run } from './cli';
import { sizeThreadPool } from './threadpool';

sizeThreadPool();

run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mountfleet: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
