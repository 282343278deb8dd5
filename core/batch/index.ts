export { type BatchJobStatus, batchJobStatus } from './status';
export { type BatchSubmitRequest, type BatchSubmitResult, jobNameProblem, submitBatchJob } from './submit';
export { type BatchClients, BatchSubmitError } from './run';
export {
  type BatchTeardownOutcome,
  BatchTeardownError,
  batchTeardownSettingsFromEnv,
  tearDownBatchRun,
} from './teardown';
