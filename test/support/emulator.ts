/**
 * Access to this worker's moto server from a test file:
 *
 *   const emu = useEmulator();          // resets state before each test, points the SDK at moto
 *   const efs = efsClient();            // core/aws/clients.ts clients pick up AWS_ENDPOINT_URL
 */
import { resetMoto } from './moto';

export interface Emulator {
  /** http://127.0.0.1:PORT of this worker's moto server. */
  readonly endpoint: string;
  reset(): Promise<void>;
}

export function emulatorEndpoint(): string {
  const all = (process.env.MOUNTFLEET_TEST_MOTO_ENDPOINTS ?? '').split(',').filter(Boolean);
  if (all.length === 0)
    throw new Error('no emulator: MOUNTFLEET_TEST_MOTO_ENDPOINTS is unset (run through jest)');
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  return all[(worker - 1) % all.length];
}

/** Registers beforeEach(reset) and sets AWS_ENDPOINT_URL to this worker's emulator for the file. */
export function useEmulator(): Emulator {
  const endpoint = emulatorEndpoint();
  const emulator: Emulator = { endpoint, reset: () => resetMoto(endpoint) };
  beforeAll(() => {
    process.env.AWS_ENDPOINT_URL = endpoint;
  });
  beforeEach(() => emulator.reset());
  afterAll(() => {
    delete process.env.AWS_ENDPOINT_URL;
  });
  return emulator;
}
