/**
 * The local sandbox: the whole toolkit end to end on one machine, with no AWS account.
 *
 *   npx tsx scripts/sandbox/main.ts [--json] [--keep-going]
 *
 * 1. starts the AWS emulator (moto) on loopback;
 * 2. `cdk bootstrap` + `cdk deploy` of the bundled app into it with the real CDK CLI (sandbox profile), then
 *    stands in for what the emulator skipped (directory buckets, alarms);
 * 3. plays fleet instances launched by the deployed Auto Scaling group in its two zones, each with an IMDSv2
 *    stand-in: one per zone mounts the seeded dataset with `up --supervise`, and each zone's Express cache
 *    goes dark in turn (mounts.ts); scratch jobs: one that writes and reads, one killed mid-run, one that
 *    receives a Spot interruption notice, one still running;
 * 4. runs the deployed reaper's handler code against the emulator (emulated Lambda cannot run it);
 * 5. the Batch section (batch-section.ts): a second stack of the same app with `fleet.scheduler: "batch"`, four
 *    jobs submitted with `mountfleet batch submit --scratch`, each ending's "Job State Change" delivered to the
 *    deployed teardown, and what is left counted from the emulator;
 * 6. collects the metrics through a CloudWatch agent stand-in (metrics.ts);
 * 7. prints a report (report.ts; `--json` for machines);
 * 8. destroys the stacks and stops everything it started, also on Ctrl-C.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { ec2Client } from '../../core/aws/clients';
import type { ReapReport } from '../../core/reaper/report';
import { EMULATOR_ACCOUNT, EMULATOR_REGION, emulatorEnv, runCdk } from '../../test/support/cdk-cli';
import { runCli } from '../../test/support/cli';
import { removeStandIns, standInForSkippedResources } from '../../test/support/cloudformation-gaps-standin';
import { answerExpressCreateSession } from '../../test/support/express-session-standin';
import { FaultProxy } from '../../test/support/fault-proxy';
import { ImdsStandIn } from '../../test/support/imds';
import { MotoServer, REPO_ROOT } from '../../test/support/moto';
import { MOUNT_HELPER_STANDIN, mountsUnder } from '../../test/support/standins';
import { batchSectionOk, playBatchSection } from './batch-section';
import { Cleanups } from './cleanup';
import { seedDataset } from './dataset';
import { agentConfigFromUserData, fleetInstances, stackOutputs, waitFor } from './fleet';
import { metricsReport, shipEmfFiles, startCloudWatchAgent } from './metrics';
import { agentMetricsLogs, chooseMountS3, playZoneOutages } from './mounts';
import { Progress } from './progress';
import { invokeReaper, scheduledEvent, terminatedEvent } from './reaper';
import { renderReport, type SandboxReport } from './report';
import {
  fleetScratch,
  guardLineOf,
  scratchIdOf,
  startJob,
  WRITE_READ_SCRIPT,
  type JobRecord,
} from './scratch-jobs';

const json = process.argv.includes('--json');
/** The app's two stacks (environments `main` and `batch` of one config, deployed together). */
const STACK = 'Mountfleet-main';
const BATCH_STACK = 'Mountfleet-batch';
const FLEET_ID = 'sandbox';
const BATCH_FLEET_ID = 'sandbox-batch';
/** The zones the fleet spans (AZ IDs, as on AWS), each with its own Express cache bucket. */
const ZONE_IDS = ['use1-az4', 'use1-az6'];
/** The bucket the demo seeds and the fleet mounts through Mountpoint. */
const DATASET_BUCKET = 'sandbox-datasets';
const DATASET_FILE = 'shard-0000.tar';
const DATASET_BYTES = 4 * 1048576;
/**
 * The reaper handler's log lines (its CloudWatch log group on AWS): written in the run's work directory, then
 * the last run's is kept here for reading after the report (one file, replaced whole by each run).
 */
const REAPER_LOG_KEPT = join(tmpdir(), 'mountfleet-sandbox-reaper.jsonl');
/** The Batch teardown handler's log lines, kept the same way. */
const BATCH_TEARDOWN_LOG_KEPT = join(tmpdir(), 'mountfleet-sandbox-batch-teardown.jsonl');
const ACCOUNT = EMULATOR_ACCOUNT;
const REGION = EMULATOR_REGION;

const progress = new Progress();
const cleanups = new Cleanups();
const log = (m: string) => progress.note(m);

type Job = JobRecord;

function sandboxEnv(moto: MotoServer, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...emulatorEnv(moto.endpoint),
    ...extra,
  };
}

async function cdk(args: string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT): Promise<string> {
  const r = await runCdk(args, { env, cwd, timeoutMs: 240_000 });
  if (r.code !== 0)
    throw new Error(`cdk ${args[0]} failed (exit ${r.code}):\n${(r.stdout + r.stderr).slice(-3000)}`);
  return r.stdout + r.stderr;
}

const report: SandboxReport = {};
let reaperLog = '';

/** Copies this run's log to `kept` through a rename, so a run beside it never sees half a file. */
function keepLog(log: string, kept: string, work: string): void {
  if (!existsSync(log)) return;
  const partial = join(work, 'kept.partial');
  copyFileSync(log, partial);
  renameSync(partial, kept); // the work directory is in the same temp directory: one file system
}

/** Detaches every mount below `dir` (deepest first), so the directory can be removed. */
function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir).sort((x, y) => y.length - x.length)) spawnSync('umount', ['-l', m]);
}

async function main(): Promise<number> {
  cleanups.onSignals(
    log,
    (signal) => progress.abort(`${signal} received`),
    (code) => {
      printReport(code);
      process.exit(code);
    },
  );
  const work = mkdtempSync(join(tmpdir(), 'mountfleet-sandbox-'));
  cleanups.add('remove work directory', () => {
    unmountUnder(work);
    rmSync(work, { recursive: true, force: true });
  });
  // Every temp file of the run (the CDK CLI's, the agents', Mountpoint's or its stand-in's, even of a killed
  // process) goes with the work directory: everything started from here inherits TMPDIR.
  const tmp = join(work, 'tmp');
  mkdirSync(tmp);
  process.env.TMPDIR = tmp;
  reaperLog = join(work, 'reaper.jsonl');
  cleanups.add('keep the reaper log', () => keepLog(reaperLog, REAPER_LOG_KEPT, work));
  const batchTeardownLog = join(work, 'batch-teardown.jsonl');
  cleanups.add('keep the Batch teardown log', () => keepLog(batchTeardownLog, BATCH_TEARDOWN_LOG_KEPT, work));

  const moto = await progress.step(
    'Start the AWS emulator (moto) on loopback',
    // Its own process group: Ctrl-C reaches every process of the foreground group, and the cleanup needs it.
    () => MotoServer.start({ ownProcessGroup: true }),
    (m) => m.endpoint,
  );
  cleanups.add('stop the emulator', () => moto.stop());
  const env = sandboxEnv(moto);
  Object.assign(process.env, env);

  await progress.step('cdk bootstrap aws://123456789012/us-east-1 (real CDK CLI)', () =>
    // Run outside the project: with an explicit environment, bootstrap needs no synth of the app.
    cdk(['bootstrap', `aws://${ACCOUNT}/${REGION}`], env, work),
  );
  const configFile = join(work, 'sandbox.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      fleetId: FLEET_ID,
      profile: 'sandbox',
      account: ACCOUNT,
      region: REGION,
      network: { azIds: ZONE_IDS },
      environments: {
        main: {
          fleet: {
            desiredCapacity: 4,
            minCapacity: 0,
            maxCapacity: 4,
            mounts: [
              { bucket: DATASET_BUCKET, prefix: 'train/', path: '/mnt/datasets', dataset: 'immutable' },
            ],
          },
        },
        // The Batch variant: its own fleet id (its scratch, revisions and Express cache buckets are its own), no
        // alarms or dashboard (the main stack shows those).
        batch: {
          fleetId: BATCH_FLEET_ID,
          monitoring: { alarms: false, dashboard: false },
          fleet: {
            scheduler: 'batch',
            spotMaxvCpus: 16,
            mounts: [
              { bucket: DATASET_BUCKET, prefix: 'train/', path: '/mnt/datasets', dataset: 'immutable' },
            ],
          },
        },
      },
    }),
  );
  const cdkOut = join(work, 'cdk.out');
  const outputsFile = join(work, 'outputs.json');
  await progress.step(
    `cdk deploy of the bundled app: ${STACK} (Express cache per zone, scratch, reaper, alarms, dashboard) and ${BATCH_STACK} (Batch queues, teardown)`,
    () =>
      cdk(
        [
          'deploy',
          STACK,
          BATCH_STACK,
          '--concurrency',
          '2',
          '--require-approval',
          'never',
          '--method=direct',
          '--no-lookups',
          '--outputs-file',
          outputsFile,
          '-o',
          cdkOut,
          '-c',
          `mountfleetConfig=${configFile}`,
        ],
        env,
      ),
  );
  const destroy = () =>
    cdk(
      ['destroy', STACK, BATCH_STACK, '--force', '-o', cdkOut, '-c', `mountfleetConfig=${configFile}`],
      env,
    );
  let destroyed = false;
  cleanups.add('cdk destroy', async () => {
    if (!destroyed) await destroy();
  });
  const outputs = stackOutputs(outputsFile, STACK);
  const stoodIn = await progress.step(
    'Stand in for what the emulator skipped: directory buckets (as ordinary buckets), alarms',
    () => standInForSkippedResources(join(cdkOut, `${STACK}.template.json`), STACK),
    (s) =>
      `${s.directoryBuckets.join(', ')}; ${s.alarms.length} alarms${s.notStoodIn.length ? `; NOT: ${s.notStoodIn.join('; ')}` : ''}`,
  );
  cleanups.add('remove the stand-ins', () => removeStandIns(stoodIn));
  report.standIns = stoodIn;
  const cloudWatchAgent = await startCloudWatchAgent(outputs.AutoScalingGroupName);
  cleanups.add('stop the CloudWatch agent stand-in', () => cloudWatchAgent.stop());
  if (!cloudWatchAgent.receiving)
    log(`Mountpoint's metrics will not arrive: ${cloudWatchAgent.notReceiving}`);

  // 3. Play fleet instances from what was deployed.
  const instances = await progress.step(
    'Find the fleet instances the Auto Scaling group launched',
    () => fleetInstances(STACK, outputs.AutoScalingGroupName, 4, ZONE_IDS),
    (ids) => ids.map((i) => `${i.instanceId} (${i.availabilityZoneId})`).join(', '),
  );
  report.zonesUsed = [...new Set(instances.map((i) => i.availabilityZoneId))];
  const agentConfig = await progress.step(
    'Read agent.json from the launch template user data',
    () => agentConfigFromUserData(instances[0].launchTemplateId),
    (c) => `fleet ${c.fleetId}`,
  );
  const agentConfigFile = join(work, 'agent.json');
  writeFileSync(agentConfigFile, JSON.stringify(agentConfig, null, 2));

  const imds = await Promise.all(
    instances.map((i) =>
      ImdsStandIn.start({
        instanceId: i.instanceId,
        instanceType: i.instanceType,
        availabilityZone: i.availabilityZone,
        availabilityZoneId: i.availabilityZoneId,
        region: REGION,
      }),
    ),
  );
  cleanups.add('stop the IMDS stand-ins', () => Promise.all(imds.map((x) => x.stop())).then(() => undefined));
  const instanceEnv = (n: number) =>
    sandboxEnv(moto, {
      MOUNTFLEET_CONFIG: agentConfigFile,
      MOUNTFLEET_EFS_MOUNT_HELPER: MOUNT_HELPER_STANDIN,
      AWS_EC2_METADATA_SERVICE_ENDPOINT: imds[n].endpoint,
      MOUNTFLEET_RUN_DIR: join(work, `run-${n}`),
      TMPDIR: work,
    });

  // Mounts: one played instance per zone runs `up --supervise`; each zone's Express cache goes dark in turn.
  const bucketsDir = await progress.step(
    `Seed s3://${DATASET_BUCKET}/train/ (the fleet's dataset mount)`,
    () => seedDataset(work, DATASET_BUCKET, DATASET_FILE, DATASET_BYTES),
    () => `${DATASET_FILE}, ${DATASET_BYTES / 1048576} MiB`,
  );
  const proxy = await FaultProxy.start({ target: moto.endpoint });
  cleanups.add('stop the fault proxy', () => proxy.stop());
  // STAND-IN for S3 Express CreateSession (moto has none), which a real Mountpoint sends before using the cache.
  answerExpressCreateSession(proxy);
  const mountS3 = chooseMountS3();
  log(`mount-s3: ${mountS3.why}`);
  report.mountS3 = mountS3;
  const mountIndexes = ZONE_IDS.map((z) =>
    instances.findIndex((i, n) => n >= 2 && i.availabilityZoneId === z),
  );
  const zones = await progress.step(
    `Mounts: up --supervise on ${mountIndexes.map((n) => instances[n].instanceId).join(', ')}; each zone's Express cache black-holed in turn`,
    () =>
      playZoneOutages({
        workDir: work,
        agentConfig,
        instances: mountIndexes.map((n) => ({
          instanceId: instances[n].instanceId,
          zoneId: instances[n].availabilityZoneId,
          imdsEndpoint: imds[n].endpoint,
        })),
        proxy,
        bucketsDir,
        mountS3,
        fileName: DATASET_FILE,
        env: sandboxEnv(moto),
        onCleanup: (what, run) => cleanups.add(what, run),
        log,
      }),
    (rs) =>
      rs
        .map(
          (r) =>
            `${r.zoneId}: standby after ${r.failoverSeconds.toFixed(1)} s, back after ${r.recoverySeconds.toFixed(1)} s`,
        )
        .join('; '),
  );
  report.zones = zones;
  shipEmfFiles(cloudWatchAgent, agentMetricsLogs(work, ZONE_IDS));

  const jobs: Job[] = [];
  report.jobs = jobs;

  // Job 1: writes and reads its scratch, exits 0.
  const ok: Job = { id: 'demo-write-read', instanceId: instances[0].instanceId, outcome: '' };
  jobs.push(ok);
  await progress.step(
    'Job 1: scratch run -- write 8 MiB, read it back',
    async () => {
      const j = startJob(ok, instanceEnv(0), WRITE_READ_SCRIPT, cleanups);
      ok.exitCode = await j.done;
      if (ok.exitCode !== 0) throw new Error(`job exited ${ok.exitCode}:\n${j.output().slice(-2000)}`);
      ok.outcome = `completed, scratch torn down; ${guardLineOf(j.output())}`;
    },
    () => ok.outcome,
  );

  // Job 4 (started now, checked later): still running on instance 3 while the reaper runs.
  const busy: Job = { id: 'demo-in-use', instanceId: instances[2].instanceId, outcome: '' };
  const busyRun = startJob(
    busy,
    instanceEnv(2),
    'echo running > "$MOUNTFLEET_SCRATCH/state"; sleep 600',
    cleanups,
  );

  // Job 2: the agent is SIGKILLed mid-run, then its instance is lost: nothing can tear down.
  const killed: Job = { id: 'demo-killed', instanceId: instances[0].instanceId, outcome: '' };
  jobs.push(killed);
  await progress.step(
    'Job 2: scratch run, agent killed with SIGKILL mid-job, instance lost',
    async () => {
      const j = startJob(killed, instanceEnv(0), 'echo started; sleep 600', cleanups);
      await waitFor('job 2 to start running', () => (j.output().includes('started') ? true : undefined));
      killed.fileSystemId = await scratchIdOf(FLEET_ID, killed.id);
      j.killAll();
      killed.exitCode = await j.done;
      // The killed job's mount goes away with its machine.
      spawnSync('umount', ['-l', j.path]);
      await ec2Client().send(new TerminateInstancesCommand({ InstanceIds: [instances[0].instanceId] }));
      killed.outcome = `agent killed; ${killed.fileSystemId} left behind`;
    },
    () => killed.outcome,
  );

  // Job 3: a Spot interruption notice appears in IMDS during the job.
  const spot: Job = { id: 'demo-spot', instanceId: instances[1].instanceId, outcome: '' };
  jobs.push(spot);
  await progress.step(
    'Job 3: scratch run, Spot interruption notice during the job',
    async () => {
      const j = startJob(spot, instanceEnv(1), 'echo started; sleep 600', cleanups);
      await waitFor('job 3 to start running', () => (j.output().includes('started') ? true : undefined));
      spot.fileSystemId = await scratchIdOf(FLEET_ID, spot.id);
      const noticeAt = Date.now();
      imds[1].scheduleSpotInterruption({ action: 'terminate', time: new Date(Date.now() + 120_000) });
      spot.exitCode = await j.done;
      const left = await fleetScratch(FLEET_ID, spot.id);
      if (left.length) throw new Error(`job 3 left ${left.map((f) => f.fileSystemId).join(', ')}`);
      imds[1].cancelSpotInterruption();
      spot.outcome = `torn down ${((Date.now() - noticeAt) / 1000).toFixed(1)} s after the notice (exit ${spot.exitCode})`;
    },
    () => spot.outcome,
  );

  busy.fileSystemId = await scratchIdOf(FLEET_ID, busy.id);
  jobs.push(busy);

  // 4. The deployed reaper's handler code, with the deployed function's settings: first the event
  //    EventBridge delivers when the lost instance terminates, then a scheduled pass over the fleet.
  const eventReport = await progress.step(
    `Reaper, event fast path: ${instances[0].instanceId} terminated`,
    () => invokeReaper(outputs.ReaperFunctionName, terminatedEvent(instances[0].instanceId), reaperLog),
    (r) => `deleted ${r.deleted.join(', ') || 'nothing'}, kept ${r.kept.length}, failed ${r.failed.length}`,
  );
  const scheduledReport = await progress.step(
    'Reaper, scheduled run over the fleet',
    () => invokeReaper(outputs.ReaperFunctionName, scheduledEvent(), reaperLog),
    (r) =>
      `deleted ${r.deleted.length}, kept ${r.kept.map((k) => k.id).join(', ') || 'nothing'}, failed ${r.failed.length}`,
  );
  // What an operator sees past the grace period: the CLI runs the same logic from anywhere.
  const pastGrace = await progress.step(
    'Operator: mountfleet reap --dry-run --grace-minutes 0 (as if the grace period had passed)',
    async () => {
      const r = await runCli(['reap', '--fleet', FLEET_ID, '--dry-run', '--grace-minutes', '0', '--json'], {
        env,
      });
      if (r.code !== 0) throw new Error(`reap exited ${r.code}: ${r.stderr.slice(-2000)}`);
      return JSON.parse(r.stdout) as ReapReport;
    },
    (r) => r.kept.map((k) => `would keep ${k.id}: ${k.reason}`).join('; ') || 'nothing to keep',
  );
  const reaped = eventReport.deleted.includes(killed.fileSystemId ?? '-');
  killed.outcome += reaped ? '; deleted by the reaper (event fast path)' : '; NOT reaped';
  const busyKept = scheduledReport.kept.find((k) => k.id === busy.fileSystemId);
  const busyUntouched =
    !eventReport.deleted.includes(busy.fileSystemId!) &&
    busyKept !== undefined &&
    pastGrace.kept.some((k) => k.id === busy.fileSystemId);
  busy.outcome = busyUntouched ? `in use, kept by the reaper (${busyKept!.reason})` : 'in use, NOT kept';

  await progress.step('Job 4: finish normally (SIGTERM), scratch torn down', async () => {
    busyRun.child.kill('SIGTERM');
    busy.exitCode = await busyRun.done;
    busy.outcome += `; ended with SIGTERM (exit ${busy.exitCode}), torn down`;
  });

  // 5. The Batch section: the second stack's queues, four jobs through the real CLI, the deployed teardown.
  const batch = await playBatchSection({
    stack: BATCH_STACK,
    fleetId: BATCH_FLEET_ID,
    templateFile: join(cdkOut, `${BATCH_STACK}.template.json`),
    outputs: stackOutputs(outputsFile, BATCH_STACK),
    motoEndpoint: moto.endpoint,
    workDir: work,
    teardownLog: batchTeardownLog,
    teardownLogKept: BATCH_TEARDOWN_LOG_KEPT,
    env,
    proxy,
    mountS3,
    bucketsDir,
    progress,
    onCleanup: (what, run) => cleanups.add(what, run),
    report,
  });

  shipEmfFiles(cloudWatchAgent, [reaperLog]);
  const metrics = await progress.step(
    "Metrics in the emulator's CloudWatch (through the CloudWatch agent stand-in)",
    () => metricsReport(cloudWatchAgent, STACK),
    (m) =>
      Object.entries(m.datapoints)
        .map(([ns, names]) => `${ns}: ${Object.values(names).reduce((a, b) => a + b, 0)} datapoints`)
        .join(', '),
  );

  const leaked = await fleetScratch(FLEET_ID);
  Object.assign(report, {
    metrics,
    reaperLog: REAPER_LOG_KEPT,
    reaper: { eventFastPath: eventReport, scheduled: scheduledReport, dryRunPastGrace: pastGrace },
    leakedFileSystems: leaked.map((f) => f.fileSystemId),
  });

  await progress.step('cdk destroy', async () => {
    await destroy();
    destroyed = true;
  });
  const failed = eventReport.failed.length + scheduledReport.failed.length;
  const mountsOk = zones.every(
    (z) =>
      z.heldOnExpress &&
      z.heldBytesSame &&
      z.otherZoneKeptCache !== false &&
      z.agentExit === 0 &&
      z.leftMounted === 0,
  );
  return leaked.length === 0 &&
    reaped &&
    busyUntouched &&
    failed === 0 &&
    mountsOk &&
    batchSectionOk(batch) &&
    metrics.errors.length === 0
    ? 0
    : 1;
}

function printReport(code: number): void {
  if (json)
    process.stdout.write(
      JSON.stringify({ ok: code === 0, ...report, steps: progress.steps }, null, 2) + '\n',
    );
  else process.stdout.write(renderReport(report, progress.steps));
}

main()
  .then(async (code) => {
    await cleanups.runAll(log);
    printReport(code);
    process.exit(code);
  })
  .catch(async (err: unknown) => {
    if (progress.aborted) return; // the signal handler cleans up and exits
    log(`sandbox failed: ${(err as Error).message}`);
    await cleanups.runAll(log);
    printReport(1);
    process.exit(1);
  });
