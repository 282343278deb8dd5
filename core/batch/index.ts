export { type BatchJobStatus, batchJobStatus } from './status';
export { type BatchSubmitRequest, type BatchSubmitResult, submitBatchJob } from './submit';
export { type BatchTeardownOutcome, batchTeardownSettingsFromEnv, tearDownBatchRun } from './teardown';
