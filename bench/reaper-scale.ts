/**
 * The reaper at 100,000 file systems: `npx tsx bench/reaper-scale.ts` (see docs/reaper.md, "At scale").
 *
 * Against the AWS stand-in (test/core/reaper/aws-standin.ts: the real SDK clients over HTTP, the documented page
 * sizes, a token bucket per service — RATE_LIMITS there says which are documented and which assumed), it prints:
 *
 * 1. `--scan`: one dry-run scheduled scan by the reaper's Lambda handler (lambda/reaper, bundled as for Lambda,
 *    in a child process of its own) of 1,000, 10,000 and 100,000 file systems of one fleet in the mix of
 *    test/core/reaper/standin-fleet.ts: read calls by operation, throttled requests, wall and CPU time, the
 *    child's peak RSS and heap, the report's and the logs' size; and whether it fits inside Lambda's 15 minutes
 *    (also at the CPU share of the construct's 512 MB) and under 512 MB. The child runs with the heap limits
 *    Lambda gives 512 MB (LAMBDA_NODE_OPTIONS). Targets: DescribeFileSystems one per 100 (+10%), the evidence
 *    batched (GetMetricData per 500, DescribeInstances per 1,000 of the fleet, DescribeJobs per 100); a scan well
 *    inside 15 minutes; peak RSS under the function's 512 MB.
 * 2. `--backlog`: a backlog of 10,000 and 100,000 orphans (test/core/reaper/standin-fleet.ts BACKLOG_MIX: nine in
 *    ten of the fleet, two in three with a mount target) worked off by scheduled runs, one every 15 minutes, each a
 *    new invocation with a Lambda's deadline, for the construct's defaults (100 deletions a run, 5 minute timeout)
 *    and the most a run may do (1,000, 15 minutes): how many runs it takes, the deletions and EFS calls of each,
 *    files systems deleted twice (target 0) and healthy ones touched (target 0). One real run on the wall clock
 *    (the stand-in throttles as AWS does), then a simulation on a VirtualClock that the stand-in's rate limits
 *    move (the reaper's own code over HTTP; only the time is simulated, and CPU time is not in it). Backlogs over
 *    10,000 run 20 simulated runs, and the rest is projected at their pace (said so where printed).
 *
 * `--scan` or `--backlog` runs that part alone; `--sizes 1000,10000` and `--backlogs 10000` pick the sizes,
 * `--max-runs N` bounds the simulated runs, `--node-options '…'` replaces the scan child's heap limits. `--moto-probe N` times moto instead: N file systems created, then one
 * GetMetricData of 500 queries over N file systems' datapoints (why the stand-in: docs/reaper.md).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../test/support/moto';
import { systemClock, type Clock } from '../core/common/clock';
import { REAPER_FUNCTION_MEMORY_MB, reaperSettingsFromFlags } from '../core/contract/reaper-settings';
import { reap } from '../core/reaper/reaper';
import { AwsStandIn, VirtualClock } from '../test/core/reaper/aws-standin';
import { reaperClients } from '../test/core/reaper/scenario';
import { BACKLOG_MIX, seedFleet } from '../test/core/reaper/standin-fleet';

const FLEET = 'bench';
const LAMBDA_TIMEOUT_MS = 15 * 60_000;
/** Lambda gives a function one vCPU at 1,769 MB, proportionally less below (configuration-memory.html). */
const ONE_VCPU_MB = 1769;
const CONSTRUCT_MEMORY_MB = REAPER_FUNCTION_MEMORY_MB;
/**
 * The V8 heap limits Lambda's Node.js runtime gives a function of CONSTRUCT_MEMORY_MB: new space a tenth of the
 * memory (semi-space half of that), old space the rest — as its bootstrap script derives them (public copies of
 * /var/runtime/bootstrap; the documentation does not say). The scan's child runs with them, so that its heap is
 * collected as it would be in the function, not left to grow on this machine's 24 GB.
 */
const LAMBDA_NODE_OPTIONS = `--max-semi-space-size=${Math.floor(CONSTRUCT_MEMORY_MB / 20)} --max-old-space-size=${CONSTRUCT_MEMORY_MB - Math.floor(CONSTRUCT_MEMORY_MB / 10)}`;
const say = (line: string) => process.stderr.write(`${line}\n`);
const mb = (bytes: number) => bytes / 1024 / 1024;

function uptime(): string {
  return execFileSync('uptime', { encoding: 'utf8' }).trim();
}

/** The reaper's Lambda handler, bundled as scripts/bundle.mjs bundles it (SDK external), into `dir`. */
async function bundleHandler(dir: string): Promise<string> {
  const outfile = join(dir, 'reaper.js');
  await build({
    entryPoints: [join(REPO_ROOT, 'lambda', 'reaper', 'index.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    minify: true,
    logLevel: 'warning',
    external: ['@aws-sdk/*', '@smithy/*'],
    outfile,
  });
  return outfile;
}

/**
 * The child's program: one scheduled invocation of the handler with a 15-minute context, sampling memory every
 * 10 ms; the handler's log lines go to stdout, the figures to stderr after RESULT.
 */
const RUNNER = `
const { handler } = require(process.env.BENCH_HANDLER);
let peakHeap = 0;
const sample = () => { peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed); };
const timer = setInterval(sample, 10);
const idleRss = process.memoryUsage().rss;
const deadline = Date.now() + ${LAMBDA_TIMEOUT_MS};
const t0 = performance.now();
const cpu0 = process.cpuUsage();
handler({ 'detail-type': 'Scheduled Event' }, { getRemainingTimeInMillis: () => deadline - Date.now() }).then((report) => {
  sample();
  clearInterval(timer);
  const cpu = process.cpuUsage(cpu0);
  process.stderr.write('\\nRESULT ' + JSON.stringify({
    wallMs: performance.now() - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    idleRssBytes: idleRss,
    peakHeapBytes: peakHeap,
    reportBytes: Buffer.byteLength(JSON.stringify(report)),
    scanned: report.scanned,
    deleted: report.deleted.length,
    marked: report.marked.length,
    kept: report.kept.length,
    omittedKept: report.omitted?.kept ?? 0,
    foreign: report.foreign.length,
    failed: report.failed.length,
  }) + '\\n');
});
`;

interface ScanResult {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly maxRssBytes: number;
  readonly idleRssBytes: number;
  readonly peakHeapBytes: number;
  readonly reportBytes: number;
  readonly scanned: number;
  readonly deleted: number;
  readonly marked: number;
  readonly kept: number;
  /** Kept entries left out of the returned report to fit Lambda's 6 MB (they are in the log lines). */
  readonly omittedKept: number;
  readonly foreign: number;
  readonly failed: number;
}

/** One dry-run scan of `size` file systems by the bundled handler in a child process. */
async function scan(dir: string, handler: string, size: number, nodeOptions: string) {
  const standIn = await AwsStandIn.start();
  try {
    const seeded = seedFleet(standIn, FLEET, size, Date.now());
    const expectedDeletions = [...seeded.expected.values()].filter((e) => e === 'deleted').length;
    const runner = join(dir, 'runner.js');
    writeFileSync(runner, RUNNER);
    const child = spawn(process.execPath, [runner], {
      env: {
        PATH: process.env.PATH,
        NODE_OPTIONS: nodeOptions,
        NODE_PATH: join(REPO_ROOT, 'node_modules'),
        BENCH_HANDLER: handler,
        AWS_ENDPOINT_URL: standIn.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'bench',
        AWS_SECRET_ACCESS_KEY: 'bench',
        AWS_EC2_METADATA_DISABLED: 'true',
        MOUNTFLEET_FLEET_ID: FLEET,
        MOUNTFLEET_DRY_RUN: 'true',
        MOUNTFLEET_MAX_DELETIONS_PER_RUN: '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logBytes = 0;
    let logLines = 0;
    let deferred = 0;
    let partial = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      logBytes += d.length;
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      logLines += lines.length;
      // The decisions over the cap: in the log, whole (the returned report may leave kept ones out).
      deferred += lines.filter((l) => l.includes('deferred: at most')).length;
    });
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = /RESULT (.*)/.exec(stderr)?.[1];
    if (status !== 0 || line === undefined)
      throw new Error(`scan of ${size} failed (exit ${status}):\n${stderr}`);
    return {
      size,
      result: JSON.parse(line) as ScanResult,
      calls: standIn.calls(),
      logBytes,
      logLines,
      deferred,
      expectedDeletions,
    };
  } finally {
    await standIn.stop();
  }
}

type Scan = Awaited<ReturnType<typeof scan>>;

function printScans(scans: readonly Scan[]) {
  const ops = [...new Set(scans.flatMap((s) => Object.keys(s.calls)))].sort();
  const col = (text: string | number, width = 12) => String(text).padStart(width);
  console.log(
    '\n== one dry-run scheduled scan by the Lambda handler (stand-in, rate limits of aws-standin.ts) ==',
  );
  console.log('file systems'.padEnd(34) + scans.map((s) => col(s.size.toLocaleString('en'))).join(''));
  for (const op of ops) {
    console.log(
      `  ${op}`.padEnd(34) + scans.map((s) => col(s.calls[op] ? `${s.calls[op].answered}` : '0')).join(''),
    );
  }
  const rows: [string, (s: Scan) => string][] = [
    ['  throttled (answered again)', (s) => `${Object.values(s.calls).reduce((n, c) => n + c.throttled, 0)}`],
    ['wall time', (s) => `${(s.result.wallMs / 1000).toFixed(1)} s`],
    ['CPU time', (s) => `${(s.result.cpuMs / 1000).toFixed(1)} s`],
    ['peak RSS', (s) => `${mb(s.result.maxRssBytes).toFixed(0)} MB`],
    ['  of which before the run', (s) => `${mb(s.result.idleRssBytes).toFixed(0)} MB`],
    ['peak heap used', (s) => `${mb(s.result.peakHeapBytes).toFixed(0)} MB`],
    ['report (JSON)', (s) => `${mb(s.result.reportBytes).toFixed(1)} MB`],
    ['log lines / size', (s) => `${s.logLines} / ${mb(s.logBytes).toFixed(0)} MB`],
    ['  kept left out of it', (s) => `${s.result.omittedKept}`],
    ['would delete (cap 1,000) + deferred', (s) => `${s.result.deleted}+${s.deferred}`],
  ];
  for (const [label, value] of rows)
    console.log(label.padEnd(34) + scans.map((s) => col(value(s), 16)).join(''));
  for (const s of scans) {
    const r = s.result;
    const slowdown = ONE_VCPU_MB / CONSTRUCT_MEMORY_MB;
    // At a fraction of a vCPU the CPU work stretches; the waits on the rate limits do not.
    const atFunction = r.wallMs + r.cpuMs * (slowdown - 1);
    const decided = r.deleted + s.deferred;
    const listing = s.calls['efs:DescribeFileSystems']?.answered ?? 0;
    const reads = Object.values(s.calls).reduce((n, c) => n + c.answered, 0);
    console.log(
      `${s.size.toLocaleString('en')}: ${(r.wallMs / 1000).toFixed(0)} s here, ~${(atFunction / 1000).toFixed(0)} s at ${CONSTRUCT_MEMORY_MB} MB's CPU share ` +
        `(${((100 * atFunction) / LAMBDA_TIMEOUT_MS).toFixed(0)}% of 15 min); peak RSS ${mb(r.maxRssBytes).toFixed(0)} MB ` +
        `(${r.maxRssBytes < CONSTRUCT_MEMORY_MB * 2 ** 20 ? 'under' : 'OVER'} the function's ${CONSTRUCT_MEMORY_MB} MB); ` +
        `decisions ${decided === s.expectedDeletions ? 'as seeded' : `WRONG: ${decided} deletions, ${s.expectedDeletions} seeded`}; ` +
        `DescribeFileSystems ${listing} (${(listing / Math.ceil(s.size / 100)).toFixed(2)}x the floor of one per 100; target <= 1.10x), ` +
        `${reads - listing} other read calls`,
    );
  }
}

/** The schedule OrphanReaper deploys by default. */
const SCHEDULE_MS = 15 * 60_000;
/** EFS: a deleted file system shows `deleting` this long (unpublished; long enough for the next run to see it). */
const DELETING_MS = 20 * 60_000;
/** EFS: a deleted mount target takes this long to go (unpublished; peers wait 60-120 s at most). */
const MOUNT_TARGET_DELETING_MS = 30_000;

interface Budget {
  readonly label: string;
  readonly maxDeletionsPerRun: number;
  readonly timeoutMs: number;
}

/** The construct's defaults, and the most a run may do. */
const BUDGETS: readonly Budget[] = [
  { label: 'defaults: 100 a run, 5 min timeout', maxDeletionsPerRun: 100, timeoutMs: 5 * 60_000 },
  { label: 'most: 1,000 a run, 15 min timeout', maxDeletionsPerRun: 1000, timeoutMs: 15 * 60_000 },
];

interface RunFigures {
  readonly deleted: number;
  readonly failed: number;
  /** Milliseconds of the run's clock from start to report. */
  readonly tookMs: number;
  readonly efsCalls: number;
  readonly listingPages: number;
  readonly calls: Record<string, { answered: number; throttled: number }>;
}

/**
 * Scheduled runs of the reaper over a backlog of `orphans` (BACKLOG_MIX) until none is left, every SCHEDULE_MS
 * on `clock`: on a VirtualClock the stand-in's rate limits make the time pass (a simulation), on the wall clock
 * they throttle (a real run; `maxRuns` 1). Each run is a new invocation with `budget`'s deadline.
 */
async function scheduledRuns(orphans: number, budget: Budget, clock: Clock, maxRuns: number) {
  const virtual = clock instanceof VirtualClock ? clock : undefined;
  const standIn = await AwsStandIn.start({
    clock,
    deletingMs: DELETING_MS,
    mountTargetDeletingMs: MOUNT_TARGET_DELETING_MS,
  });
  process.env.AWS_ENDPOINT_URL = standIn.endpoint;
  try {
    const seeded = seedFleet(standIn, FLEET, Math.round((orphans * 1000) / 900), clock.now(), BACKLOG_MIX);
    const toDelete = [...seeded.expected].filter(([, e]) => e === 'deleted').map(([id]) => id);
    const kept = [...seeded.expected].filter(([, e]) => e !== 'deleted').map(([id]) => id);
    const settings = reaperSettingsFromFlags({
      fleetId: FLEET,
      maxDeletionsPerRun: budget.maxDeletionsPerRun,
    });
    const runs: RunFigures[] = [];
    const wall0 = performance.now();
    let left = toDelete.length;
    while (left > 0 && runs.length < maxRuns) {
      const start = clock.now();
      standIn.resetCalls();
      const report = await reap(reaperClients(), settings, {
        clock,
        remainingTimeMs: () => start + budget.timeoutMs - clock.now(),
      });
      const calls = standIn.calls();
      const efsCalls = Object.entries(calls)
        .filter(([op]) => op.startsWith('efs:'))
        .reduce((n, [, c]) => n + c.answered, 0);
      runs.push({
        deleted: report.deleted.length,
        failed: report.failed.length,
        tookMs: clock.now() - start,
        efsCalls,
        listingPages: Math.ceil(report.scanned / 100),
        calls,
      });
      left = toDelete.filter((id) => {
        const state = standIn.fileSystem(id)?.lifeCycleState;
        return state !== undefined && state !== 'deleting';
      }).length;
      virtual?.advance(start + SCHEDULE_MS - clock.now());
    }
    const wrongly = kept.filter((id) => standIn.fileSystem(id)?.lifeCycleState !== 'available').length;
    return {
      orphans: toDelete.length,
      runs,
      left,
      wrongly,
      repeatDeletions: standIn.repeatDeletions,
      wallMs: performance.now() - wall0,
    };
  } finally {
    delete process.env.AWS_ENDPOINT_URL;
    await standIn.stop();
  }
}

function printBacklog(budget: Budget, result: Awaited<ReturnType<typeof scheduledRuns>>, real = false) {
  const { runs } = result;
  const deleted = runs.reduce((n, r) => n + r.deleted, 0);
  const longest = Math.max(...runs.map((r) => r.tookMs));
  const efs = runs.reduce((n, r) => n + r.efsCalls, 0);
  const sample = [0, 1, Math.floor(runs.length / 2), runs.length - 1]
    .filter((i, k, all) => i < runs.length && all.indexOf(i) === k)
    .map(
      (i) =>
        `#${i + 1}: ${runs[i].deleted} deleted in ${(runs[i].tookMs / 1000).toFixed(0)} s, ${runs[i].efsCalls} EFS calls (${runs[i].listingPages} listing pages)`,
    );
  // Stopped by the bound on runs: the rest at the pace of the last five runs (each deletes what its cap allows).
  const recent = runs.slice(-5);
  const pace = recent.reduce((n, r) => n + r.deleted, 0) / recent.length;
  const more = result.left === 0 ? 0 : Math.ceil(result.left / pace);
  const total = runs.length + more;
  const outcome = real
    ? `${result.orphans - result.left} deleted by one real run on the wall clock in ${(result.wallMs / 1000).toFixed(0)} s`
    : result.left === 0
      ? `all gone after ${runs.length} runs`
      : `${result.left} left after ${runs.length} simulated runs; at their last ${recent.length} runs' ${pace.toFixed(0)} a run, ${more} more (PROJECTED): ${total} runs`;
  const hours = `${((total * SCHEDULE_MS) / 3_600_000).toFixed(1)} h at one run per 15 min${more > 0 ? ', PROJECTED' : ''}`;
  console.log(
    `${result.orphans.toLocaleString('en')} orphans, ${budget.label}: ${outcome} ` +
      `(${hours}); ${deleted} deletions, ${efs} EFS calls (${(efs / Math.max(1, deleted)).toFixed(2)} per deletion); ` +
      `longest run ${(longest / 1000).toFixed(0)} s of ${budget.timeoutMs / 1000} s; ${runs.reduce((n, r) => n + r.failed, 0)} failed; ` +
      `deleted twice: ${result.repeatDeletions}; healthy ones touched: ${result.wrongly}` +
      (real ? '' : `; simulated in ${(result.wallMs / 1000).toFixed(0)} s`),
  );
  console.log(`  ${sample.join('; ')}`);
  const perRun = runs.map((r) => r.deleted);
  const short = runs.slice(0, -1).filter((r) => r.deleted < budget.maxDeletionsPerRun).length;
  console.log(
    `  deleted per run: ${Math.min(...perRun)} to ${Math.max(...perRun)}; runs but the last that deleted fewer than the cap: ${short}`,
  );
  const first = Object.entries(runs[0].calls).map(([op, c]) => `${op.replace(/^efs:/, '')} ${c.answered}`);
  console.log(`  run #1's calls: ${first.join(', ')}`);
}

/** moto at `count` file systems: how long creating them takes, and one GetMetricData of 500 queries. */
async function motoProbe(count: number) {
  const { MotoServer } = await import('../test/support/moto');
  const { efsClient, cloudWatchClient } = await import('../core/aws/clients');
  const { CreateFileSystemCommand } = await import('@aws-sdk/client-efs');
  const { GetMetricDataCommand, PutMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
  });
  const moto = await MotoServer.start();
  process.env.AWS_ENDPOINT_URL = moto.endpoint;
  try {
    const efs = efsClient({ maxAttempts: 1, requestTimeoutMs: 600_000 });
    const cloudwatch = cloudWatchClient({ maxAttempts: 1, requestTimeoutMs: 600_000 });
    const now = Date.now();
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < count; i = next++) {
          await efs.send(
            new CreateFileSystemCommand({
              CreationToken: `mf/${FLEET}/run-${i}`,
              Backup: false,
              AvailabilityZoneName: 'us-east-1a',
              Tags: [{ Key: 'mountfleet:fleet', Value: FLEET }],
            }),
          );
        }
      }),
    );
    const created = (performance.now() - t0) / 1000;
    for (let i = 0; i < count; i += 100) {
      const ids = Array.from({ length: Math.min(100, count - i) }, (_, k) => `fs-${i + k}`);
      const MetricData = ids.flatMap((id) =>
        Array.from({ length: 10 }, (_, m) => ({
          MetricName: 'ClientConnections',
          Dimensions: [{ Name: 'FileSystemId', Value: id }],
          Timestamp: new Date(now - (10 + m) * 60_000),
          Value: 0,
        })),
      );
      await cloudwatch.send(new PutMetricDataCommand({ Namespace: 'AWS/EFS', MetricData }));
    }
    const t1 = performance.now();
    await cloudwatch.send(
      new GetMetricDataCommand({
        StartTime: new Date(now - 35 * 60_000),
        EndTime: new Date(now - 5 * 60_000),
        MetricDataQueries: Array.from({ length: 500 }, (_, i) => ({
          Id: `q${i}`,
          MetricStat: {
            Metric: {
              Namespace: 'AWS/EFS',
              MetricName: 'ClientConnections',
              Dimensions: [{ Name: 'FileSystemId', Value: `fs-${i}` }],
            },
            Period: 1800,
            Stat: 'Sum',
          },
        })),
      }),
    );
    console.log(
      `moto: ${count} file systems created in ${created.toFixed(1)} s (8 at once, no mount targets); ` +
        `one GetMetricData of 500 queries over their ${count * 10} datapoints took ${((performance.now() - t1) / 1000).toFixed(1)} s`,
    );
  } finally {
    await moto.stop();
  }
}

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

async function main() {
  say(`start: ${uptime()}`);
  const probe = flag('--moto-probe');
  if (probe !== undefined) {
    await motoProbe(Number(probe));
    console.log(`load: ${uptime()}`);
    return;
  }
  const all = !process.argv.includes('--scan') && !process.argv.includes('--backlog');
  if (all || process.argv.includes('--scan')) {
    const sizes = (flag('--sizes') ?? '1000,10000,100000').split(',').map(Number);
    const dir = mkdtempSync(join(tmpdir(), 'mountfleet-reaper-scale-'));
    try {
      const handler = await bundleHandler(dir);
      const scans: Scan[] = [];
      for (const size of sizes) {
        say(`scanning ${size} file systems`);
        scans.push(await scan(dir, handler, size, flag('--node-options') ?? LAMBDA_NODE_OPTIONS));
      }
      printScans(scans);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (all || process.argv.includes('--backlog')) {
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const backlogs = (flag('--backlogs') ?? '10000,100000').split(',').map(Number);
    console.log('\n== a backlog of orphans worked off by scheduled runs (one every 15 min) ==');
    console.log('one real run on the wall clock (the stand-in throttles as AWS does):');
    printBacklog(BUDGETS[0], await scheduledRuns(backlogs[0], BUDGETS[0], systemClock, 1), true);
    console.log('simulated (the stand-in moves a virtual clock as its rate limits let requests through):');
    for (const orphans of backlogs) {
      for (const budget of BUDGETS) {
        say(`simulating ${orphans} orphans, ${budget.label}`);
        printBacklog(
          budget,
          await scheduledRuns(
            orphans,
            budget,
            new VirtualClock(Date.now()),
            Number(flag('--max-runs') ?? (orphans <= 10_000 ? Infinity : 20)),
          ),
        );
      }
    }
  }
  console.log(`\nload: ${uptime()}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
