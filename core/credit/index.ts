export {
  DEFAULT_CREDIT_CHECK_SECONDS,
  ON_CREDIT_LOW,
  type CreditGuardOptions,
  type CreditReport,
  type OnCreditLow,
  startCreditGuard,
} from './guard';
export { appendCreditMetrics } from './metric';
export {
  type BurstCreditOutlook,
  INITIAL_BURST_CREDIT_GIB,
  INITIAL_CREDIT_BYTES,
  READ_METERING_FACTOR,
  burstCreditOutlook,
} from './model';
export { mountStatsReader } from './mountstats';
export { burstCreditPreflight } from './preflight';
export { readCredit } from './readings';
export { type RunSummary, readRunSummary, runSummary } from './run-summary';
