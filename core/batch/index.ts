export { submitThroughFunction } from './invoke';
export { type BatchJobStatus, batchJobStatus } from './status';
export { type BatchFleetSettings, batchSettingsFromEnv } from './settings';
export { answerSubmitRequest, parseSubmitRequest, submitBatchJob } from './submit';
export { type BatchTeardownOutcome, tearDownBatchRun } from './teardown';
