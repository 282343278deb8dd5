/**
 * The Batch teardown's Lambda entry point: a thin handler over core/batch. EventBridge invokes it on
 * "Batch Job State Change" events for SUCCEEDED and FAILED; it deletes the run's file system, deregisters its
 * revision and resubmits a retry where one is due. Events not of the fleet's runs are logged once and ignored;
 * a step that fails makes the invocation fail, so the event's retry finishes it (every step is idempotent).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { batchClient, ec2Client, efsClient } from '../../core/aws';
import { batchSettingsFromEnv, tearDownBatchRun, type BatchTeardownOutcome } from '../../core/batch';

// Created once per container: connections and the adaptive retry state carry over between invocations.
const clients = { batch: batchClient(), efs: efsClient(), ec2: ec2Client() };
const logger = new Logger({ serviceName: 'mountfleet-batch-teardown' });

export async function handler(event: unknown): Promise<BatchTeardownOutcome> {
  const settings = batchSettingsFromEnv();
  const outcome = await tearDownBatchRun(clients, settings, event, {
    log: (line) => logger.info(line, { fleet: settings.fleetId }),
  });
  if (outcome.status === 'ignored')
    logger.info('event ignored', { fleet: settings.fleetId, reason: outcome.reason });
  else logger.info('run torn down', { fleet: settings.fleetId, ...outcome });
  return outcome;
}
