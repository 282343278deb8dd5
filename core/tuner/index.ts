export {
  type CacheVolume,
  DEFAULT_ROOT_FREE_GIB,
  type NvmeDisk,
  describeDisks,
  listedInstanceStoreDisks,
  planCacheVolume,
  planCacheVolumeForType,
} from './cache-volume';
export { quoteArg } from './command-line';
export {
  CSI_ADDON_NAME,
  CSI_SERVICE_ACCOUNT,
  type CsiClaim,
  type CsiPlanInput,
  type CsiVolumeSpec,
  csiInputProblems,
  planCsiClaims,
  renderCsiManifests,
  toYamlStream,
} from './csi-volumes';
export { FALLBACK_INSTANCE_TYPES, type InstanceTypeFacts, closestInstanceTypes } from './instance-facts';
export { mountNames, planMounts } from './plan-mounts';
export {
  type MemoryFacts,
  type MountPlan,
  type ProcessPlan,
  type ProcessRole,
  type TuningPlan,
} from './plan-types';
