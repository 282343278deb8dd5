export { DEFAULT_CREDIT_CHECK_SECONDS, ON_CREDIT_LOW, type OnCreditLow } from './credit-guard';
export { MAX_SPOT_POLL_MS } from './lifecycle';
export { generateJobId, jobIdProblem } from './naming';
export { deleteScratch, listScratch, scratchListTable } from './operators';
export { type ScratchRunRecord, activeScratchRuns } from './registry';
export { runScratch } from './run';
export { type ScratchRunIo, type ScratchRunRequest } from './run-plan';
export { compareWithRun, readRunSummary, renderAgainst } from './run-summary';
// For core/batch: the burst-credit preflight and readings, and run ids.
export { readCredit } from './credit-readings';
export { generateRunId } from './naming';
export { burstCreditPreflight } from './preflight';
