export { AgentRunDirBusy, holdAgentRunDir } from './agent-lock';
export { StateFileError, agentProcessStatus, readState, statePath } from './agent-state';
export { installMountpoint } from './install-mountpoint';
export { type AgentOptions, MountAgent } from './mount-agent';
export {
  type S3Count,
  type S3CountSource,
  agentS3Counter,
  mountS3Count,
  s3CountBetween,
} from './mount-metrics-reading';
export { type ProcessMetrics } from './mountpoint-counters';
export { handleAutoScalingTermination } from './termination-hook';
