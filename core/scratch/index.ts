export { MAX_SPOT_POLL_MS } from './lifecycle';
export { deleteScratch, listScratch, scratchListTable } from './operators';
export { type ScratchRunRecord, activeScratchRuns } from './registry';
export { runScratch } from './run';
export { type ScratchRunIo, type ScratchRunRequest } from './run-plan';
