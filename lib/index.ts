// The public API of the mountfleet construct library.
export {
  FLEET_ID_PATTERN,
  SCRATCH_CREATE_TAG_KEYS,
  TAG_FLEET,
  TAG_JOB,
  TAG_MARKED_IDLE_AT,
  TAG_OWNER_INSTANCE,
  TAG_RUN,
  TAG_TEARDOWN_STARTED_AT,
  fleetIdProblem,
} from '../core/contract';
export {
  DEFAULT_BATCH_SCRATCH_PATH,
  TAG_BATCH_AZ_ID,
  TAG_BATCH_MOUNT_PATHS,
  TAG_BATCH_SCRATCH_PATH,
  TAG_BATCH_SCRATCH_SECURITY_GROUP,
  TAG_BATCH_SCRATCH_SUBNET,
} from '../core/contract';
export {
  EXPRESS_METRICS_NAMESPACE,
  EXPRESS_SWITCH_DIMENSIONS,
  EXPRESS_SWITCH_METRICS,
  MOUNTPOINT_FLEET_DIMENSION,
  MOUNTPOINT_METRICS_NAMESPACE,
  REAPER_FLEET_DIMENSION,
  REAPER_METRICS_NAMESPACE,
  REAPER_METRIC_NAMES,
  type ReaperMetricName,
} from '../core/contract';
export {
  AGENT_CONFIG_VERSION,
  CACHE_POLICIES,
  MOUNTPOINT_DEFAULT_VERSION,
  MOUNTPOINT_KEY_FINGERPRINT,
  agentConfigSchema,
  parseAgentConfig,
  type AgentConfig,
  type AgentConfigInput,
  type CachePolicy,
  type MountConfig,
} from '../core/contract';

// Constructs, and the interfaces they accept from one another.
export * from './interfaces';
export * from './fleet-network';
export * from './express-cache';
export * from './mountpoint-csi-volumes';
export * from './scratch-file-systems';
export * from './fleet-instances-props';
export * from './compute-fleet';
export * from './batch-compute-fleet';
export * from './batch-fleet-job-definition';
export * from './batch-scratch-teardown';
export * from './batch-submit-function';
export * from './orphan-reaper';
export * from './storage-dashboard';
export * from './mountfleet-stack';
export * from './stack-config';
// The bundled app's config loader. Its error class and context reader stay out of the package root: jsii
// (Python, Java, .NET, Go) has no Error subclasses, and free functions are TypeScript-only anyway.
export { DEFAULT_AZ_IDS, loadAppConfig, resolveAppConfig, type AppConfigInput } from './app-config';
