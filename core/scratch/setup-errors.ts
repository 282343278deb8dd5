/** How setting up a scratch run fails beyond its file system (core/efs/setup-errors.ts): what it needs is held. */
import { InUseError } from '../common';

/**
 * Another run holds what this one needs: the job id or the path on this instance (core/scratch/run-locks.ts),
 * or a path that nests with another run's. Nothing was created (exit 75).
 */
export class ScratchInUseError extends InUseError {
  override readonly name = 'ScratchInUseError';
}
