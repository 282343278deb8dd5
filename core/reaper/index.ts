export { lazyReaperClients } from './clients';
export { type FileSystemFacts } from './decide';
export { parseReaperEvent } from './events';
export { type LivenessClients, judgeRun } from './liveness';
export { reap } from './reaper';
export { type ReapReport, reportCounts, reportWithin, summarizeReport } from './report';
