/** How setting up a scratch run fails: what the caller must tell apart (interrupted, in use, outcome unknown). */
import { InUseError } from '../common';

/** Thrown between steps once the run was asked to stop (signal, Spot notice). */
export class ScratchInterrupted extends Error {
  override readonly name = 'ScratchInterrupted';
  constructor() {
    super('interrupted');
  }
}

/**
 * Another run holds what this one needs: the job id or the path on this instance (core/scratch/run-locks.ts),
 * or a path that nests with another run's. Nothing was created (exit 75).
 */
export class ScratchInUseError extends InUseError {
  override readonly name = 'ScratchInUseError';
}

/** A resource could not be made usable: the message says what and why, for the user. */
export class ScratchSetupError extends Error {
  override readonly name = 'ScratchSetupError';
}

/**
 * CreateFileSystem got no answer that says whether it was carried out (transport error, timeout, a server
 * error, an unreadable answer): a file system with this run's CreationToken may now exist.
 */
export class CreateOutcomeUnknown extends Error {
  override readonly name = 'CreateOutcomeUnknown';
}

/** Throws ScratchInterrupted once the run was asked to stop. */
export function checkInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ScratchInterrupted();
}
