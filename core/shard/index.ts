export { type ShardSummary, summaryKey } from './layout';
export { shardPrefix } from './shard';
export { type SourceCheck, verifyShards } from './verify';
