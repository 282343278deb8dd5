export { DEFAULT_CREDIT_CHECK_SECONDS, ON_CREDIT_LOW, type OnCreditLow } from './credit-guard';
export { MAX_SPOT_POLL_MS } from './lifecycle';
export { generateJobId, jobIdProblem } from './naming';
export { deleteScratch, listScratch, scratchListTable } from './operators';
export { type ScratchRunRecord, activeScratchRuns } from './registry';
export { runScratch } from './run';
export { type ScratchRunIo, type ScratchRunRequest } from './run-plan';
export { compareWithRun, readRunSummary, renderAgainst } from './run-summary';
// For core/batch: a Batch run provisions its file system and mount target with scratch's own code.
export { readCredit } from './credit-readings';
export { ensureMountTarget, waitForMountTarget } from './mount-target';
export { generateRunId } from './naming';
export { burstCreditPreflight } from './preflight';
export { createFileSystem, findFileSystemByToken, madeByRun, waitForFileSystem } from './provision';
export { CreateOutcomeUnknown } from './setup-errors';
