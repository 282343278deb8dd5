export {
  foreignReason,
  listFleetFileSystemDescriptions,
  mapFleetFileSystems,
  tagValue,
} from './fleet-file-systems';
export { findFileSystemByToken, madeByRun } from './run-create';
export {
  type ProvisionStep,
  type RunFileSystemDeletion,
  type RunFileSystemSpec,
  deleteRunFileSystem,
  findRunFileSystem,
  provisionRunFileSystem,
} from './run-file-system';
export { CreateOutcomeUnknown, RunInterrupted, RunSetupError } from './setup-errors';
export {
  type TeardownOptions,
  type TeardownOutcome,
  listMountTargets,
  markTeardownStarted,
  teardownFileSystem,
} from './teardown';
export { type WaitOptions } from './wait';
