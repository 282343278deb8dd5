/**
 * Reaper benchmark: `npx tsx bench/reaper.ts`. Starts its own moto and fault proxy and prints:
 *
 * 1. read-path API calls by operation, and wall time, of a dry-run scan of 1,000 tagged file systems in
 *    mixed states, 100 of them Batch runs (targets: <= 15 read calls: 10 pages, 2 GetMetricData, 2 DescribeInstances — the fleet query and the unknown owner by id —, 1 DescribeJobs; <= 10 s);
 * 2. the deletion rate of 200 orphans that each have a mount target, then of 200 of which half have one,
 *    behind a 10 requests/s token bucket on EFS: EFS calls per deleted file system, and the time against the
 *    floor that limit sets at 3 calls per deletion with a mount target, 1 without (target: the 200 with a
 *    mount target at >= 95% of the floor, in <= 63.2 s, with every deletion re-checked);
 * 2b. the peer: Cloud Custodian (c7n from PyPI, pinned; its `efs` resource and `delete` action, which
 *    re-checks nothing) deleting the same 200 behind the same bucket. It is installed on first use into
 *    ~/.cache/mountfleet/c7n-<version> (MOUNTFLEET_CUSTODIAN names another `custodian`); where it cannot be
 *    installed the bench says why and goes on without it;
 * `--deletion-only` runs part 2 alone, `--read-path-only` part 1 alone.
 *
 * `--batch` runs the Batch scenario alone: a dry-run scan of 1,000 Batch runs' file systems (read calls by
 * operation; target: 22 — 10 pages, 2 GetMetricData, 10 DescribeJobs, 100 job ids a call, as the report's
 * batchLookups counts them) and the deletion rate of 200 Batch orphans with a mount target behind the same
 * 10 req/s bucket (target: as part 2's headline — 3.02 EFS calls per deletion, >= 95% of the floor). Their job
 * ids are ones the emulator does not know: kept under the 60 min bound (the scan, at 45 min), deleted past it
 * (the deletion run, at 70 min); the DescribeJobs calls are the same whatever the jobs' states.
 *
 * 3. the Lambda bundle's size (target <= 100 KB, SDK external) and its cold initialisation in a fresh
 *    process: loading the bundle and constructing its clients (target <= 150 ms).
 */
import { randomUUID } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchClient, cloudWatchClient, ec2Client, efsClient, taggingClient } from '../core/aws/clients';
import {
  connectionWindow,
  listFleetFileSystems,
  lookupOwners,
  readConnections,
} from '../core/reaper/evidence';
import { reap, type ReaperClients } from '../core/reaper/reaper';
import type { Clock } from '../core/common/clock';
import { reaperSettingsFromFlags } from '../core/contract/reaper-settings';
import { FaultProxy } from '../test/support/fault-proxy';
import { createNetwork } from '../test/support/fixtures';
import { MotoServer, REPO_ROOT } from '../test/support/moto';
import {
  UNKNOWN_INSTANCE,
  clockAt,
  createFileSystem,
  describeAll,
  launchOwners,
  seedConnections,
  withLifecycleState,
  type FileSystemSpec,
} from '../test/core/reaper/scenario';

Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
});
const FLEET = 'bench';
const say = (line: string) => process.stderr.write(`${line}\n`);

async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

const clients = (): ReaperClients => ({
  efs: efsClient(),
  ec2: ec2Client(),
  cloudwatch: cloudWatchClient(),
  tagging: taggingClient(),
  batch: batchClient(),
});

interface Group {
  readonly label: string;
  readonly count: number;
  readonly spec: (owners: Owners) => FileSystemSpec;
  /** ClientConnections per minute over the window; no datapoints when unset. */
  readonly connections?: number;
  readonly lifecycle?: string;
}
interface Owners {
  next(kind: 'running' | 'terminated'): string;
}

/** 1,000 file systems of the fleet in the mix a real scan meets. */
const MIX: Group[] = [
  {
    label: 'in use',
    count: 200,
    connections: 1,
    spec: (o) => ({ owner: o.next('running'), mountTarget: true }),
  },
  {
    label: 'idle, owner running',
    count: 150,
    connections: 0,
    spec: (o) => ({ owner: o.next('running'), mountTarget: true }),
  },
  {
    label: 'no datapoints, owner running',
    count: 150,
    spec: (o) => ({ owner: o.next('running'), mountTarget: true }),
  },
  {
    label: 'owner terminated',
    count: 150,
    connections: 0,
    spec: (o) => ({ owner: o.next('terminated'), mountTarget: true }),
  },
  {
    // Judged by their jobs: one DescribeJobs per 100 (job ids the emulator does not know: kept, under an hour old).
    label: 'Batch runs',
    count: 100,
    connections: 0,
    spec: () => ({ mountTarget: true, batchQueue: 'bench-az0', batchJob: randomUUID() }),
  },
  { label: 'owner unknown', count: 50, spec: () => ({ owner: UNKNOWN_INSTANCE, mountTarget: true }) },
  { label: 'no mount target', count: 150, spec: (o) => ({ owner: o.next('running') }) },
  { label: 'creating', count: 25, lifecycle: 'creating', spec: (o) => ({ owner: o.next('running') }) },
  {
    label: 'error',
    count: 25,
    lifecycle: 'error',
    spec: (o) => ({ owner: o.next('running'), mountTarget: true }),
  },
];

async function ownerPool(running: number, terminated: number): Promise<Owners> {
  const ec2 = ec2Client();
  const ids = { running: [] as string[], terminated: [] as string[] };
  for (const [kind, count] of [
    ['running', running],
    ['terminated', terminated],
  ] as const) {
    for (let left = count; left > 0; left -= 100) {
      ids[kind].push(...(await launchOwners(ec2, FLEET, kind, Math.min(100, left))));
    }
  }
  const cursor = { running: 0, terminated: 0 };
  return { next: (kind) => ids[kind][cursor[kind]++ % ids[kind].length] };
}

/** Setup calls: one attempt with a long timeout, so a slow emulator answer is never retried into a conflict. */
const setupEfs = () => efsClient({ maxAttempts: 1, requestTimeoutMs: 120_000 });

/** A dry-run scan of the fleet after a warm-up call: its report, wall time and read calls by operation. */
async function timedDryRun(c: ReaperClients, proxy: FaultProxy, clock: Clock) {
  await c.efs.send(new (await import('@aws-sdk/client-efs')).DescribeFileSystemsCommand({ MaxItems: 1 }));
  proxy.resetStats();
  const t0 = performance.now();
  const report = await reap(
    c,
    reaperSettingsFromFlags({ fleetId: FLEET, dryRun: true, maxDeletionsPerRun: 1000 }),
    { clock },
  );
  const wallMs = performance.now() - t0;
  const byOperation = Object.entries(proxy.stats().byOperation).map(([op, st]) => [op, st.requests] as const);
  return { report, wallMs, byOperation, reads: byOperation.reduce((a, [, n]) => a + n, 0) };
}

async function benchReadPath(proxy: FaultProxy) {
  const efs = setupEfs();
  // Six /24 subnets: a mount target takes an address, and 825 of them do not fit in one.
  const net = await createNetwork(ec2Client(), 6);
  const owners = await ownerPool(450, 100);
  const clock = clockAt(60);
  const created: { id: string; group: Group }[] = [];
  const jobs = MIX.flatMap((group) => Array.from({ length: group.count }, () => group));
  const started = Date.now();
  await pool(jobs, 8, async (group) => {
    const subnet = net.subnets[created.length % net.subnets.length];
    const id = await createFileSystem(
      efs,
      { ...net, subnets: [subnet] },
      { fleet: FLEET, ...group.spec(owners) },
    );
    created.push({ id, group });
  });
  say(`created ${created.length} file systems in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const value of [0, 1]) {
    const ids = created.filter((c) => c.group.connections === value).map((c) => c.id);
    await seedConnections(
      cloudWatchClient(),
      ids,
      Array.from({ length: 10 }, () => value),
      clock.now(),
      8,
    );
  }
  const states = Object.fromEntries(
    created.filter((c) => c.group.lifecycle).map((c) => [c.id, c.group.lifecycle!]),
  );
  proxy.addRule({
    service: 'efs',
    operation: 'DescribeFileSystems',
    fault: { kind: 'rewrite', rewrite: withLifecycleState(states) },
  });

  const c = clients();
  const { report, wallMs, byOperation: calls, reads } = await timedDryRun(c, proxy, clock);
  const byOperation = Object.fromEntries(calls);
  // Where the time goes: each batched read on its own (same inputs as the scan).
  const steps: Record<string, number> = {};
  const timed = async (name: string, f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    steps[name] = performance.now() - t;
  };
  const fleet = await listFleetFileSystems(c.efs, FLEET);
  await timed('DescribeFileSystems x10', () => listFleetFileSystems(c.efs, FLEET));
  await timed('GetMetricData x2', () =>
    readConnections(
      c.cloudwatch,
      fleet.map((f) => f.id),
      connectionWindow(clock.now(), 30, 5),
    ),
  );
  const ownerIds = [...new Set(fleet.flatMap((f) => (f.ownerInstanceId ? [f.ownerInstanceId] : [])))];
  await timed(`DescribeInstances (${ownerIds.length} owners)`, () => lookupOwners(c.ec2, FLEET, ownerIds));
  proxy.clear();
  return { report, wallMs, byOperation, reads, steps };
}

/** Orphans to delete: how many, and how many of them have a mount target. */
interface DeletionMix {
  readonly orphans: number;
  readonly withMountTarget: number;
  /** Batch runs' file systems (judged by their jobs) instead of file systems of a terminated owner. */
  readonly batch?: boolean;
}

/** A Batch run's file system, as `mountfleet batch submit` tags it; its job id one the emulator does not know. */
const batchRunSpec = (): FileSystemSpec => ({ batchQueue: 'bench-az0', batchJob: randomUUID() });

/** A fresh emulator with `mix` orphans of the fleet (their owner terminated), and the bucket in front of EFS. */
async function seedOrphans(moto: MotoServer, proxy: FaultProxy, mix: DeletionMix) {
  await moto.reset();
  const efs = setupEfs();
  const net = await createNetwork(ec2Client(), 1);
  const [gone] = await launchOwners(ec2Client(), FLEET, 'terminated');
  await pool(
    Array.from({ length: mix.orphans }, (_, i) => i),
    8,
    async (i) =>
      void (await createFileSystem(efs, net, {
        fleet: FLEET,
        ...(mix.batch ? batchRunSpec() : { owner: gone }),
        mountTarget: i < mix.withMountTarget,
      })),
  );
  proxy.setRateLimit({ service: 'efs', ratePerSecond: 10, burst: 10 });
  await new Promise((r) => setTimeout(r, 1100)); // let the bucket fill, as after a quiet period
  proxy.resetStats();
}

/** Watches EFS requests at the proxy (the rule never fires): when the first and the last one arrived. */
function efsSpan(proxy: FaultProxy) {
  const span = { first: 0, last: 0 };
  proxy.addRule({
    service: 'efs',
    match: () => {
      span.first ||= performance.now();
      span.last = performance.now();
      return false;
    },
    fault: { kind: 'delay', ms: 0 },
  });
  return span;
}

/** What one deletion run cost, as the proxy saw it. */
function deletionFigures(proxy: FaultProxy, mix: DeletionMix, deleted: number, seconds: number) {
  const efsStats = proxy.stats().byService.efs;
  proxy.clear();
  // The floor: at 10 req/s, the fewest calls these deletions can take — one with a mount target needs
  // DescribeMountTargets (its id), DeleteMountTarget and DeleteFileSystem (in AWS more tries while the target
  // finishes deleting; moto deletes it at once); one without, DeleteFileSystem alone. The listing and the
  // re-check pages (one per 100) are extra: they are what the floor's rate is measured against.
  const floorCalls = 3 * mix.withMountTarget + (mix.orphans - mix.withMountTarget);
  const floorSeconds = floorCalls / 10;
  return {
    deleted,
    seconds,
    requests: efsStats.requests,
    forwarded: efsStats.forwarded,
    throttled: efsStats.requests - efsStats.forwarded,
    callsPerDeleted: efsStats.forwarded / deleted,
    floorPerDeleted: floorCalls / mix.orphans,
    floorSeconds,
    ofFloor: (floorSeconds * deleted) / mix.orphans / seconds,
    usefulRatio: efsStats.forwarded / seconds / 10,
  };
}

async function benchDeletion(moto: MotoServer, proxy: FaultProxy, mix: DeletionMix) {
  await seedOrphans(moto, proxy, mix);
  const c = clients();
  const t0 = performance.now();
  const report = await reap(c, reaperSettingsFromFlags({ fleetId: FLEET, maxDeletionsPerRun: mix.orphans }), {
    clock: clockAt(mix.batch ? 70 : 60),
  });
  const seconds = (performance.now() - t0) / 1000;
  return {
    ...deletionFigures(proxy, mix, report.deleted.length, seconds),
    failed: report.failed.length,
    kept: report.kept.length,
    batchLookups: report.batchLookups,
  };
}

const C7N_VERSION = '0.9.53';

/** The `custodian` program: MOUNTFLEET_CUSTODIAN, or c7n installed from PyPI into a cache of the bench's own. */
function custodianProgram(): { readonly path: string } | { readonly skipped: string } {
  const named = process.env.MOUNTFLEET_CUSTODIAN;
  if (named)
    return existsSync(named) ? { path: named } : { skipped: `MOUNTFLEET_CUSTODIAN=${named} does not exist` };
  const venv = join(homedir(), '.cache', 'mountfleet', `c7n-${C7N_VERSION}`);
  const program = join(venv, 'bin', 'custodian');
  if (existsSync(program)) return { path: program };
  say(`installing Cloud Custodian ${C7N_VERSION} (c7n, PyPI) into ${venv} for the peer comparison`);
  try {
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(join(venv, 'bin', 'pip'), ['install', '--quiet', `c7n==${C7N_VERSION}`], {
      stdio: 'inherit',
    });
    return { path: program };
  } catch (err) {
    rmSync(venv, { recursive: true, force: true });
    return { skipped: `could not install c7n ${C7N_VERSION}: ${(err as Error).message.split('\n')[0]}` };
  }
}

/**
 * The peer: a Cloud Custodian policy that deletes the fleet's file systems (`resource: efs`, a tag filter,
 * `actions: [delete]`: for each file system with mount targets DescribeMountTargets and DeleteMountTarget,
 * then DeleteFileSystem for each; nothing re-read). Its run time is the `custodian` process's; the span from
 * its first EFS request to its last leaves out Python's start-up and its tag look-ups.
 */
async function benchCustodian(moto: MotoServer, proxy: FaultProxy, mix: DeletionMix, program: string) {
  await seedOrphans(moto, proxy, mix);
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-c7n-'));
  const policy = join(dir, 'policy.yml');
  writeFileSync(
    policy,
    [
      'policies:',
      '  - name: mountfleet-orphans',
      '    resource: efs',
      '    filters:',
      `      - "tag:mountfleet:fleet": ${FLEET}`,
      '    actions:',
      '      - delete',
      '',
    ].join('\n'),
  );
  const span = efsSpan(proxy);
  const t0 = performance.now();
  const log: string[] = [];
  const status = await new Promise<number | null>((resolve, reject) => {
    // --cache-period 0: Custodian otherwise answers from its 15-minute cache of an earlier run's listing.
    const args = ['run', '--cache-period', '0', '--region', 'us-east-1', '-s', join(dir, 'out'), policy];
    const child = spawn(program, args, {
      env: { ...process.env, AWS_DEFAULT_REGION: 'us-east-1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => log.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => log.push(d.toString()));
    child.on('error', reject);
    child.on('close', resolve);
  });
  const seconds = (performance.now() - t0) / 1000;
  const efsSeconds = (span.last - span.first) / 1000;
  const figures = deletionFigures(proxy, mix, 0, seconds);
  const left = [...(await describeAll(setupEfs())).values()].filter((fs) =>
    fs.Tags?.some((t) => t.Key === 'mountfleet:fleet' && t.Value === FLEET),
  ).length;
  rmSync(dir, { recursive: true, force: true });
  if (status !== 0) say(`custodian exited ${status}:\n${log.join('').slice(-2000)}`);
  const deleted = mix.orphans - left;
  return {
    ...figures,
    deleted,
    callsPerDeleted: figures.forwarded / deleted,
    ofFloor: (figures.floorSeconds * deleted) / mix.orphans / seconds,
    efsSeconds,
    efsOfFloor: (figures.floorSeconds * deleted) / mix.orphans / efsSeconds,
    status,
  };
}

function benchBundle() {
  const bundle = join(REPO_ROOT, 'dist', 'lambda', 'reaper', 'index.js');
  if (!existsSync(bundle)) execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'bundle.mjs')]);
  const sizeKb = statSync(bundle).size / 1024;
  const measure = (script: string) => {
    const samples = Array.from({ length: 7 }, () =>
      Number(execFileSync(process.execPath, ['-e', script], { env: process.env, encoding: 'utf8' }).trim()),
    ).sort((a, b) => a - b);
    return { median: samples[3], min: samples[0] };
  };
  const init = measure(
    `const t=process.hrtime.bigint(); require(${JSON.stringify(bundle)}); console.log(Number(process.hrtime.bigint()-t)/1e6)`,
  );
  // What the first owner lookup adds (the EC2 client is built then, not at init).
  const ec2 = measure(
    `require(${JSON.stringify(bundle)}); const t=process.hrtime.bigint(); new (require('@aws-sdk/client-ec2').EC2Client)({}); console.log(Number(process.hrtime.bigint()-t)/1e6)`,
  );
  return { sizeKb, init, ec2 };
}

async function printReadPath(proxy: FaultProxy) {
  const read = await benchReadPath(proxy);
  const r = read.report;
  console.log('\n== dry-run scan of 1,000 tagged file systems (mixed states) ==');
  console.log(
    `decisions: would delete ${r.deleted.length}, would mark ${r.marked.length}, kept ${r.kept.length}, failed ${r.failed.length} (scanned ${r.scanned})`,
  );
  for (const [op, n] of Object.entries(read.byOperation)) console.log(`  ${op.padEnd(28)} ${n}`);
  for (const [step, ms] of Object.entries(read.steps)) {
    console.log(`  alone: ${step.padEnd(34)} ${(ms / 1000).toFixed(2)} s`);
  }
  console.log(
    `read calls: ${read.reads} (target <= 15)   wall time: ${(read.wallMs / 1000).toFixed(2)} s (target <= 10 s)`,
  );
}

async function printDeletion(moto: MotoServer, proxy: FaultProxy, mix: DeletionMix, headline: boolean) {
  const del = await benchDeletion(moto, proxy, mix);
  const what = mix.batch ? 'Batch runs ended long ago' : 'orphans';
  console.log(
    `\n== mountfleet reap: ${mix.orphans} ${what} (${mix.withMountTarget} with a mount target) behind a 10 req/s EFS token bucket ==`,
  );
  console.log(
    `deleted ${del.deleted}, kept ${del.kept}, failed ${del.failed} in ${del.seconds.toFixed(1)} s; EFS requests ${del.requests} ` +
      `(${del.forwarded} through, ${del.throttled} throttled by the bucket)` +
      (mix.batch
        ? `; Batch: ${del.batchLookups.describeJobs} DescribeJobs, ${del.batchLookups.listJobs} ListJobs`
        : ''),
  );
  console.log(
    `EFS calls per deleted file system: ${del.callsPerDeleted.toFixed(2)} through the bucket ` +
      `(${(del.requests / del.deleted).toFixed(2)} sent), every deletion re-checked; the floor ${del.floorPerDeleted.toFixed(2)} ` +
      `(3 with a mount target, 1 without; listing and re-check pages, one per 100, on top)`,
  );
  console.log(
    `time: ${del.seconds.toFixed(1)} s against the floor's ${del.floorSeconds.toFixed(1)} s at 10 req/s = ` +
      `${(100 * del.ofFloor).toFixed(1)}% of the floor` +
      (headline ? ` (target >= 95%: <= ${(del.floorSeconds / 0.95).toFixed(1)} s)` : '') +
      `; requests through the bucket ${(100 * del.usefulRatio).toFixed(0)}% of 10/s`,
  );
  return del;
}

/** The Batch scenario (`--batch`): 1,000 Batch runs scanned, then 200 Batch orphans deleted. */
async function benchBatch(moto: MotoServer, proxy: FaultProxy) {
  const efs = setupEfs();
  const net = await createNetwork(ec2Client(), 6);
  const ids: string[] = [];
  const started = Date.now();
  await pool(
    Array.from({ length: 1000 }, (_, i) => i),
    8,
    async (i) => {
      const subnet = net.subnets[i % net.subnets.length];
      ids.push(
        await createFileSystem(
          efs,
          { ...net, subnets: [subnet] },
          { fleet: FLEET, ...batchRunSpec(), mountTarget: true },
        ),
      );
    },
  );
  say(`created ${ids.length} Batch runs' file systems in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const clock = clockAt(45);
  await seedConnections(
    cloudWatchClient(),
    ids,
    Array.from({ length: 10 }, () => 0),
    clock.now(),
    8,
  );
  const { report, wallMs, byOperation, reads } = await timedDryRun(clients(), proxy, clock);
  console.log(
    "\n== dry-run scan of 1,000 Batch runs' file systems (0 connections, jobs unknown, 45 min old) ==",
  );
  console.log(
    `decisions: would delete ${r(report.deleted)}, would mark ${r(report.marked)}, kept ${r(report.kept)}, failed ${r(report.failed)} (scanned ${report.scanned})`,
  );
  for (const [op, n] of byOperation) console.log(`  ${op.padEnd(28)} ${n}`);
  console.log(
    `report.batchLookups: ${report.batchLookups.describeJobs} DescribeJobs, ${report.batchLookups.listJobs} ListJobs; ` +
      `read calls: ${reads} per 1,000 (target 22)   wall time: ${(wallMs / 1000).toFixed(2)} s`,
  );
  await moto.reset();
  proxy.clear();
  await printDeletion(moto, proxy, { orphans: 200, withMountTarget: 200, batch: true }, true);
}

const r = (list: readonly unknown[]) => list.length;

async function main() {
  const moto = await MotoServer.start();
  const proxy = await FaultProxy.start({ target: moto.endpoint });
  process.env.AWS_ENDPOINT_URL = proxy.endpoint;
  const benchStart = Date.now();
  try {
    if (process.argv.includes('--batch')) {
      await benchBatch(moto, proxy);
      console.log(
        `\nload average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
      return;
    }
    if (!process.argv.includes('--deletion-only')) await printReadPath(proxy);
    if (process.argv.includes('--read-path-only')) return;

    const headline = { orphans: 200, withMountTarget: 200 };
    let reaperSeconds = 0;
    for (const mix of [headline, { orphans: 200, withMountTarget: 100 }]) {
      const del = await printDeletion(moto, proxy, mix, mix === headline);
      if (mix === headline) reaperSeconds = del.seconds;
    }

    const custodian = custodianProgram();
    console.log(
      `\n== peer: Cloud Custodian ${C7N_VERSION}, the same ${headline.orphans} orphans, same bucket ==`,
    );
    if ('skipped' in custodian) console.log(`skipped: ${custodian.skipped}`);
    else {
      const peer = await benchCustodian(moto, proxy, headline, custodian.path);
      console.log(
        `deleted ${peer.deleted} (exit status ${peer.status}) in ${peer.seconds.toFixed(1)} s ` +
          `(its EFS requests spanned ${peer.efsSeconds.toFixed(1)} s); EFS requests ${peer.requests} ` +
          `(${peer.forwarded} through, ${peer.throttled} throttled); ${peer.callsPerDeleted.toFixed(2)} calls per deleted file system, nothing re-checked`,
      );
      console.log(
        `time: ${(100 * peer.ofFloor).toFixed(1)}% of the floor (${(100 * peer.efsOfFloor).toFixed(1)}% over its EFS span); ` +
          `mountfleet reap ${reaperSeconds.toFixed(1)} s vs Custodian ${peer.seconds.toFixed(1)} s ` +
          `(${reaperSeconds < peer.efsSeconds ? 'faster than its EFS span too' : 'NOT faster than its EFS span'})`,
      );
    }

    const b = benchBundle();
    console.log('\n== Lambda bundle ==');
    console.log(`dist/lambda/reaper/index.js: ${b.sizeKb.toFixed(1)} KB (target <= 100 KB, SDK external)`);
    console.log(
      `cold init (load bundle + construct EFS and CloudWatch clients, fresh node, 7 runs): median ${b.init.median.toFixed(0)} ms, ` +
        `min ${b.init.min.toFixed(0)} ms (target <= 150 ms)`,
    );
    console.log(
      `EC2 client, built on the first owner lookup: median ${b.ec2.median.toFixed(0)} ms more (on the fast path only for a state change, to confirm it)`,
    );
    console.log(
      `\nbench wall time ${((Date.now() - benchStart) / 1000).toFixed(0)} s; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await proxy.stop();
    await moto.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
