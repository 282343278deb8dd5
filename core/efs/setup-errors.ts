/** How making a run's file system fails: what a caller must tell apart (interrupted, outcome unknown, unusable). */
import { EXIT_STATUS, MountfleetError } from '../common';

/** Thrown between steps once the caller asked to stop (a signal, a Spot notice, a deadline). */
export class RunInterrupted extends MountfleetError {
  override readonly name = 'RunInterrupted';
  constructor() {
    super('interrupted', EXIT_STATUS.interrupted);
  }
}

/**
 * A resource could not be made usable: the message says what and why, for the user (a Batch submit's error
 * quotes it as `RunSetupError: …`).
 */
export class RunSetupError extends MountfleetError {
  override readonly name = 'RunSetupError';
}

/**
 * CreateFileSystem got no answer that says whether it was carried out (transport error, timeout, a server
 * error, an unreadable answer): a file system with this run's CreationToken may now exist.
 */
export class CreateOutcomeUnknown extends MountfleetError {
  override readonly name = 'CreateOutcomeUnknown';

  constructor(message: string, options?: ErrorOptions) {
    super(message, EXIT_STATUS.failure, options);
  }
}

/** Throws RunInterrupted once the caller asked to stop. */
export function checkInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RunInterrupted();
}
