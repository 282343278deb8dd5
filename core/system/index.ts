export { makeDirectories } from './directories';
export { type HeldLock, LockFileError, acquireLock, lockFileError } from './lock';
export {
  type MountEntry,
  isMountPoint,
  mountHolding,
  mountStack,
  readMountinfo,
  sameMount,
  topMount,
} from './mountinfo';
export { controlGroupMembers, processAlive, processGroupMembers, processStartTime } from './processes';
export {
  type CheckedDirectory,
  holdCheckedDirectory,
  realMountPath,
  untrustedConfiguredPathProblem,
  untrustedPathProblemBeforeCreating,
} from './trusted-path';
