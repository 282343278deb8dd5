/**
 * One Batch run with scratch, made whole or not at all: the run's One Zone file system in the queue's zone
 * (core/scratch's provisioning, CreationToken mf/<fleet>/<run>), its mount target, the revision
 * `mf-<fleet>-<run>` that mounts it, the job, then the file system's job tags. A step that fails (or a stop
 * asked for) after the file system exists rolls back what was made: the revision deregistered, the file system
 * deleted (core/efs's safe delete), and the error names the step. Shared by `batch submit` and by the teardown's
 * retries, which are new runs.
 */
import {
  DeregisterJobDefinitionCommand,
  SubmitJobCommand,
  type BatchClient,
  type JobDefinition,
} from '@aws-sdk/client-batch';
import type { EC2Client } from '@aws-sdk/client-ec2';
import { TagResourceCommand, type EFSClient } from '@aws-sdk/client-efs';
import { abortAfter, errorText, EXIT_STATUS, MountfleetError, systemClock, type Clock } from '../common';
import {
  BATCH_RUN_TAG_KEYS,
  BATCH_SUBMIT_LIMIT_MINUTES,
  TAG_BATCH_ATTEMPT,
  TAG_BATCH_ATTEMPTS,
  TAG_BATCH_CLAIM,
  TAG_BATCH_FIRST_JOB,
  TAG_BATCH_JOB,
  TAG_BATCH_QUEUE,
  TAG_FLEET,
  TAG_RUN,
  creationToken,
  runJobDefinitionName,
} from '../contract';
import {
  CreateOutcomeUnknown,
  deleteRunFileSystem,
  provisionRunFileSystem,
  type ProvisionStep,
  type WaitOptions,
} from '../efs';
import { activeRevisions, registerRevision, runRevision } from './job-definition';
import type { FleetQueue, ScratchPlacement } from './queue';

/** The clients a Batch run needs. */
export interface BatchClients {
  readonly batch: BatchClient;
  readonly efs: EFSClient;
  readonly ec2: EC2Client;
}

/** Bounds, clock and progress of a run's steps. */
export interface RunOptions {
  readonly clock?: Clock;
  /** Aborting stops between steps (and cuts off reads and waits); what was made is rolled back. */
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
  /** The wait for the file system and for its mount target, each. @default 600000 */
  readonly waitTimeoutMs?: number;
}

interface ScratchRunSpec {
  readonly fleetId: string;
  readonly queue: FleetQueue;
  readonly placement: ScratchPlacement;
  /** The job definition the run's revision copies (for a retry: the failed run's revision). */
  readonly base: JobDefinition;
  readonly scratchPath: string;
  readonly runId: string;
  readonly jobName: string;
  /** The command override; the job definition's command when unset. */
  readonly command?: readonly string[];
  /** 1-based. */
  readonly attempt: number;
  readonly attempts: number;
  /** The job id of attempt 1; unset for attempt 1 itself. */
  readonly firstJobId?: string;
  /** The fleet's scratch KMS key; the AWS managed key for EFS when unset. */
  readonly kmsKeyId?: string;
  /**
   * A nonce of this caller, tagged on the file system at its creation (TAG_BATCH_CLAIM): set when another caller
   * may make the same run at the same instant (a retry's run id is derived, so two deliveries of one event share
   * it). The run goes on only if the file system under its CreationToken carries this nonce; otherwise the
   * other caller made it, and submitScratchRun throws RunMadeElsewhere, touching nothing.
   */
  readonly claim?: string;
}

export interface SubmittedRun {
  readonly jobId: string;
  readonly runId: string;
  readonly fileSystemId: string;
  readonly jobDefinitionArn: string;
  readonly attempt: number;
}

/**
 * A submit failed, or was stopped; the message names the step and what the rollback did. Its name is what a
 * submitter sees of the submit function's error (`BatchSubmitError: run …`).
 */
export class BatchSubmitError extends MountfleetError {
  override readonly name = 'BatchSubmitError';
}

/** The run's file system was made by another caller (another claim): that caller registers and submits. */
export class RunMadeElsewhere extends MountfleetError {
  override readonly name = 'RunMadeElsewhere';
  constructor(
    readonly runId: string,
    readonly fileSystemId: string,
  ) {
    super(`run ${runId}: file system ${fileSystemId} under its CreationToken was made by another caller`);
  }
}

/** Calls made during rollback get this long each (the caller's stop signal does not cut them off). */
const ROLLBACK_CALL_MS = 30_000;

/** The run's tags on its job and its revision: the keys the fleet's IAM allows there, and no other. */
function runTags(spec: ScratchRunSpec): Partial<Record<(typeof BATCH_RUN_TAG_KEYS)[number], string>> {
  return {
    [TAG_FLEET]: spec.fleetId,
    [TAG_RUN]: spec.runId,
    [TAG_BATCH_ATTEMPT]: String(spec.attempt),
    [TAG_BATCH_ATTEMPTS]: String(spec.attempts),
    ...(spec.firstJobId === undefined ? {} : { [TAG_BATCH_FIRST_JOB]: spec.firstJobId }),
  };
}

/** Makes the run and submits its job; throws BatchSubmitError (nothing left behind, or what was, said). */
export async function submitScratchRun(
  clients: BatchClients,
  spec: ScratchRunSpec,
  options: RunOptions = {},
): Promise<SubmittedRun> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const made: Made = { outcomeUnknown: false, registerSent: false };
  const steps = new RunSteps(clock, options.signal);
  try {
    steps.enter('create the file system');
    const fileSystemId = await createFileSystem(clients.efs, spec, made, steps, {
      clock,
      signal: options.signal,
      onProgress: log,
      timeoutMs: options.waitTimeoutMs,
    });
    steps.enter('register the job definition', { withinLimit: true });
    const tags = runTags(spec);
    // Not aborted, as the creates: a registration carried out after we stopped listening would be left behind.
    made.registerSent = true;
    made.revisionArn = await registerRevision(
      clients.batch,
      runRevision(spec.base, { ...spec, fileSystemId, tags }),
    );
    log(`registered ${made.revisionArn}`);
    steps.enter('submit the job', { withinLimit: true });
    const jobId = await submitJob(clients.batch, spec, made.revisionArn, tags);
    await tagSubmitted(clients.efs, fileSystemId, spec, jobId, log);
    return {
      jobId,
      runId: spec.runId,
      fileSystemId,
      jobDefinitionArn: made.revisionArn,
      attempt: spec.attempt,
    };
  } catch (err) {
    // Nothing of it is ours to undo: the caller that made the file system goes on with it.
    if (err instanceof RunMadeElsewhere) throw err;
    throw await rolledBackError(err, clients, spec, made, steps.current, { ...options, clock, log });
  }
}

/** The step a run is at; entering the next one checks first that no stop was asked for. */
class RunSteps {
  current = '';
  private readonly startedAt: number;

  constructor(
    private readonly clock: Clock,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.startedAt = clock.now();
  }

  /**
   * Enters `step`, throwing StopAsked once a stop was asked for; `withinLimit` also refuses to go on past the
   * submit's time limit (the reaper takes a file system without a job tag once it is well past it).
   */
  enter(step: string, check: { readonly withinLimit?: boolean } = {}): void {
    this.current = step;
    if (this.signal?.aborted) throw new StopAsked();
    if (!check.withinLimit) return;
    const minutes = (this.clock.now() - this.startedAt) / 60_000;
    if (minutes > BATCH_SUBMIT_LIMIT_MINUTES) {
      throw new Error(
        `the submit has taken ${Math.floor(minutes)} min, past its limit of ${BATCH_SUBMIT_LIMIT_MINUTES} min (the reaper may take its file system)`,
      );
    }
  }
}

/**
 * The run's file system and its mount target, ready (core/efs), tagged with the queue and any claim; records
 * what it made in `made` as it goes. Throws RunMadeElsewhere when the file system under the run's token carries
 * another caller's claim.
 */
async function createFileSystem(
  efs: EFSClient,
  spec: ScratchRunSpec,
  made: Made,
  steps: RunSteps,
  wait: WaitOptions,
): Promise<string> {
  try {
    await provisionRunFileSystem(
      efs,
      {
        fleetId: spec.fleetId,
        jobId: spec.jobName,
        runId: spec.runId,
        availabilityZoneName: spec.placement.availabilityZoneName,
        subnetId: spec.placement.subnetId,
        securityGroupId: spec.placement.securityGroupId,
        kmsKeyId: spec.kmsKeyId,
        extraTags: [
          { Key: TAG_BATCH_QUEUE, Value: spec.queue.name },
          ...(spec.claim === undefined ? [] : [{ Key: TAG_BATCH_CLAIM, Value: spec.claim }]),
        ],
      },
      { ...wait, onStep: (s) => onProvisionStep(s, spec, made, steps, wait.onProgress) },
    );
  } catch (err) {
    made.outcomeUnknown = err instanceof CreateOutcomeUnknown;
    throw err;
  }
  return made.fileSystemId!;
}

/** Each step of the provisioning: the file system made (ours, by its claim), then the waits and the mount target. */
function onProvisionStep(
  s: ProvisionStep,
  spec: ScratchRunSpec,
  made: Made,
  steps: RunSteps,
  log: ((line: string) => void) | undefined,
): void {
  if (s.step === 'created') {
    // FileSystemAlreadyExists answers with the token's file system: another caller's, unless it has our nonce.
    const claimedBy = s.fileSystem.Tags?.find((t) => t.Key === TAG_BATCH_CLAIM)?.Value;
    if (spec.claim !== undefined && claimedBy !== spec.claim) {
      throw new RunMadeElsewhere(spec.runId, s.fileSystem.FileSystemId!);
    }
    made.fileSystemId = s.fileSystem.FileSystemId!;
    log?.(
      `created file system ${made.fileSystemId} in ${spec.placement.availabilityZoneName} (run ${spec.runId})`,
    );
    steps.enter('wait for the file system');
  } else if (s.step === 'mount-target') {
    steps.enter('create the mount target');
  } else if (s.step === 'mount-target-created') {
    steps.enter('wait for the mount target');
  }
}

/** SubmitJob of the run's revision, with the run's tags; the job id. */
async function submitJob(
  batch: BatchClient,
  spec: ScratchRunSpec,
  revisionArn: string,
  tags: ReturnType<typeof runTags>,
): Promise<string> {
  // Not aborted once sent: a submit carried out after we stopped listening would run a job whose file system
  // the rollback deletes (it fails to mount and its own teardown cleans up), so let it answer.
  const submitted = await batch.send(
    new SubmitJobCommand({
      jobName: spec.jobName,
      jobQueue: spec.queue.arn,
      jobDefinition: revisionArn,
      ...(spec.command === undefined ? {} : { containerOverrides: { command: [...spec.command] } }),
      retryStrategy: { attempts: 1 },
      propagateTags: true,
      tags,
    }),
  );
  return submitted.jobId!;
}

/** Rolls back what the run made and says so: the BatchSubmitError naming the step (exit 130 when stopped). */
async function rolledBackError(
  err: unknown,
  clients: BatchClients,
  spec: ScratchRunSpec,
  made: Made,
  step: string,
  options: RunOptions & { readonly clock: Clock; readonly log: (line: string) => void },
): Promise<BatchSubmitError> {
  const stopped = err instanceof StopAsked || options.signal?.aborted === true;
  const undone = await rollBack(clients, spec, made, options.clock, options.log);
  const why = stopped
    ? `stopped (${String(options.signal?.reason ?? 'stop')}) at "${step}"`
    : `could not ${step}: ${errorText(err)}`;
  return new BatchSubmitError(
    `run ${spec.runId}: ${why}; ${undone}`,
    stopped ? EXIT_STATUS.interrupted : EXIT_STATUS.failure,
    { cause: err },
  );
}

/** What a run made so far: all its rollback may undo. */
interface Made {
  fileSystemId?: string;
  /** CreateFileSystem got no clear answer: a file system with the run's token may exist. */
  outcomeUnknown: boolean;
  /** RegisterJobDefinition was sent: a revision of the run's name may exist even without an answer. */
  registerSent: boolean;
  revisionArn?: string;
}

/** Thrown between steps once a stop was asked for. */
class StopAsked extends MountfleetError {
  override readonly name = 'StopAsked';

  constructor() {
    super('stop asked', EXIT_STATUS.interrupted);
  }
}

/** The file system learns its job: best effort, the job runs either way (its teardown finds it by token). */
async function tagSubmitted(
  efs: EFSClient,
  fileSystemId: string,
  spec: ScratchRunSpec,
  jobId: string,
  log: (line: string) => void,
): Promise<void> {
  try {
    await efs.send(
      new TagResourceCommand({
        ResourceId: fileSystemId,
        Tags: [
          { Key: TAG_BATCH_JOB, Value: jobId },
          { Key: TAG_BATCH_ATTEMPT, Value: String(spec.attempt) },
          { Key: TAG_BATCH_FIRST_JOB, Value: spec.firstJobId ?? jobId },
        ],
      }),
      { abortSignal: abortAfter(ROLLBACK_CALL_MS) },
    );
  } catch (err) {
    log(
      `WARNING: job ${jobId} is submitted, but its file system ${fileSystemId} could not be tagged with it ` +
        `(${errorText(err)}); its teardown finds it by CreationToken all the same`,
    );
  }
}

/** Undoes what the run made; says what it did (or could not do) in words for the error. */
async function rollBack(
  clients: BatchClients,
  spec: ScratchRunSpec,
  made: Made,
  clock: Clock,
  log: (line: string) => void,
): Promise<string> {
  const said: string[] = [];
  const left: string[] = [];
  if (made.registerSent) {
    const name = runJobDefinitionName(spec.fleetId, spec.runId);
    try {
      // By name, not by the answer's ARN: a registration whose answer was lost made one all the same.
      for (const arn of await activeRevisions(clients.batch, name, abortAfter(ROLLBACK_CALL_MS))) {
        await clients.batch.send(new DeregisterJobDefinitionCommand({ jobDefinition: arn }), {
          abortSignal: abortAfter(ROLLBACK_CALL_MS),
        });
        said.push(`deregistered ${arn}`);
      }
    } catch (err) {
      left.push(
        `job definition ${name} (${errorText(err)}): \`aws batch deregister-job-definition --job-definition ${name}:<revision>\``,
      );
    }
  }
  if (made.fileSystemId !== undefined || made.outcomeUnknown) {
    // By the run's CreationToken, checked to carry the run's tags: also finds one a create without an answer made.
    try {
      const deletion = await deleteRunFileSystem(clients.efs, spec, {
        clock,
        callTimeoutMs: ROLLBACK_CALL_MS,
        onProgress: log,
      });
      if (deletion.status === 'pending')
        left.push(`file system ${deletion.fileSystemId} (${deletion.reason})`);
      else if (deletion.status === 'not-ours') {
        left.push(
          `file system ${deletion.fileSystemId} holds the run's CreationToken without its tags: left alone`,
        );
      } else if (deletion.status !== 'not-found') said.push(`deleted file system ${deletion.fileSystemId}`);
    } catch (err) {
      left.push(
        `file system ${made.fileSystemId ?? `with CreationToken ${creationToken(spec.fleetId, spec.runId)}`} (${errorText(err)})`,
      );
    }
  }
  if (left.length > 0) {
    return (
      `ROLLBACK INCOMPLETE: ${said.length ? `${said.join(', ')}; ` : ''}left: ${left.join('; ')}. ` +
      `A left file system carries ${TAG_FLEET}=${spec.fleetId}, ${TAG_RUN}=${spec.runId}: ` +
      `\`mountfleet scratch delete <id> --fleet ${spec.fleetId} --force\` deletes it`
    );
  }
  return said.length > 0 ? `rolled back: ${said.join(', ')}; nothing left` : 'nothing was created';
}
