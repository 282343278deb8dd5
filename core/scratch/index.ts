export { DEFAULT_CREDIT_CHECK_SECONDS, ON_CREDIT_LOW, type OnCreditLow } from './credit-guard';
export { appendCreditMetrics } from './credit-metric';
export {
  NotThisFleetsError,
  RunAliveError,
  deleteScratchFileSystem,
  listScratchFileSystems,
} from './inventory';
export { type StopReason } from './job-supervision';
export { type CreditGuardRequest, EXIT_SCRATCH_FAILED, MAX_SPOT_POLL_MS, runScratchJob } from './lifecycle';
export { type LocalSetup, prepareLocalRun } from './local-setup';
export { generateJobId, jobIdProblem } from './naming';
export { burstCreditPreflight, parseBytes } from './preflight';
export { type ScratchRunRecord, activeScratchRuns, registerScratchRun } from './registry';
export { SummaryError, compareWithRun, readRunSummary, renderAgainst, runSummary } from './run-summary';
export {
  ScratchSettingsError,
  loadOptionalAgentConfig,
  resolveFleetId,
  resolveScratchPath,
  resolveScratchSettings,
} from './settings';
export { ScratchInUseError } from './setup-errors';
