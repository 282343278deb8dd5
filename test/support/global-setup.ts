/**
 * Starts one moto server per Jest worker, once per test run. Workers are spawned after this runs, so
 * they inherit MOUNTFLEET_TEST_MOTO_ENDPOINTS; each worker uses the server of its JEST_WORKER_ID, which
 * lets workers reset state between tests without touching each other's.
 */
import type { Config } from 'jest';
import { MotoServer } from './moto';
import { usePrivateTmpdir } from './private-tmpdir';

declare global {
  var __MOUNTFLEET_MOTO__: MotoServer[] | undefined;
  var __MOUNTFLEET_TMPDIR__: string | undefined;
}

export default async function globalSetup(_globalConfig: unknown, projectConfig: Config): Promise<void> {
  const config = _globalConfig as { maxWorkers?: number };
  const count = Math.max(1, config.maxWorkers ?? 1);
  void projectConfig;
  // Before anything starts: the emulators and the workers inherit TMPDIR (removed by global-teardown).
  globalThis.__MOUNTFLEET_TMPDIR__ = usePrivateTmpdir();
  const servers = await Promise.all(Array.from({ length: count }, () => MotoServer.start()));
  globalThis.__MOUNTFLEET_MOTO__ = servers;
  process.env.MOUNTFLEET_TEST_MOTO_ENDPOINTS = servers.map((s) => s.endpoint).join(',');
}
