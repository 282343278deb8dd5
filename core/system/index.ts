export { cgroup2Root, cgroupMembers, killCgroup, leafCgroups } from './cgroups';
export { makeDirectories } from './directories';
export { type FuseAbortOutcome, abortFuseConnection } from './fuse-connections';
export { type HeldLock, LockFileError, acquireLock, lockFileError } from './lock';
export {
  type MountEntry,
  isMountPoint,
  mountHolding,
  mountStack,
  parseMountinfo,
  readMountinfo,
  sameMount,
  topMount,
} from './mountinfo';
export {
  controlGroupMembers,
  parentPid,
  processAlive,
  processGroupMembers,
  processStartTime,
} from './processes';
export {
  type CheckedDirectory,
  holdCheckedDirectory,
  realMountPath,
  untrustedConfiguredPathProblem,
  untrustedMountPointProblem,
  untrustedPathProblemBeforeCreating,
} from './trusted-path';
