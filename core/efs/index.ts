export { foreignReason, listFleetFileSystemDescriptions, tagValue } from './fleet-file-systems';
export {
  type TeardownOptions,
  type TeardownOutcome,
  listMountTargets,
  markTeardownStarted,
  teardownFileSystem,
} from './teardown';
