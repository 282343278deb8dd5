/** Stops every moto server global-setup started. */
export default async function globalTeardown(): Promise<void> {
  await Promise.all((globalThis.__MOUNTFLEET_MOTO__ ?? []).map((s) => s.stop()));
  globalThis.__MOUNTFLEET_MOTO__ = undefined;
}
