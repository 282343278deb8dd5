/** Stops every moto server global-setup started, then removes the run's temporary directory. */
import { removePrivateTmpdir } from './private-tmpdir';

export default async function globalTeardown(): Promise<void> {
  await Promise.all((globalThis.__MOUNTFLEET_MOTO__ ?? []).map((s) => s.stop()));
  globalThis.__MOUNTFLEET_MOTO__ = undefined;
  const dir = globalThis.__MOUNTFLEET_TMPDIR__;
  if (dir === undefined) return;
  const detached = removePrivateTmpdir(dir);
  if (detached.length)
    process.stderr.write(`global teardown: detached mounts a test left in ${dir}: ${detached.join(', ')}\n`);
  globalThis.__MOUNTFLEET_TMPDIR__ = undefined;
}
