/**
 * The Batch submit function's Lambda entry point: a thin handler over core/batch. `mountfleet batch submit`
 * invokes it (the submitter may do nothing else but read job state): it checks the request, the queue and the
 * job definition against the fleet, makes the run and submits the job, or refuses with the field and the fix.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { batchClient, ec2Client, efsClient } from '../../core/aws';
import { answerSubmitRequest, batchSettingsFromEnv } from '../../core/batch';
import type { BatchSubmitAnswer } from '../../core/contract';

// Created once per container: connections and the adaptive retry state carry over between invocations.
const clients = { batch: batchClient(), efs: efsClient(), ec2: ec2Client() };
const logger = new Logger({ serviceName: 'mountfleet-batch-submit' });

export async function handler(event: unknown, context: Context): Promise<BatchSubmitAnswer> {
  const settings = batchSettingsFromEnv();
  const answer = await answerSubmitRequest(clients, settings, event, {
    remainingMs: context.getRemainingTimeInMillis(),
    log: (line) => logger.info(line, { fleet: settings.fleetId }),
  });
  if (answer.status === 'refused')
    logger.warn('refused', { fleet: settings.fleetId, reason: answer.message });
  else logger.info('submitted', { ...answer.result });
  return answer;
}
