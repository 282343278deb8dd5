export { type AgentStopOutcome, agentStatus, stopAgent } from './agent-control';
export { type AgentState } from './agent-state';
export {
  type S3Count,
  type S3CountSource,
  agentS3Counter,
  mountS3Count,
  s3CountBetween,
} from './mount-metrics-reading';
export { type ProcessMetrics } from './mountpoint-counters';
export { runAgent } from './run-agent';
