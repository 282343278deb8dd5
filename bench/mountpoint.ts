/**
 * The agent's Mountpoint profile against Mountpoint's defaults, on the real Mountpoint (the harness, or
 * MOUNTFLEET_MOUNT_S3), with a fixed delay on every S3 request (the fault proxy in front of moto). Needs root;
 * it re-runs itself in a private mount namespace.
 *
 *   node scripts/bundle.mjs && npx tsx bench/mountpoint.ts [--instance-type g5.xlarge] [--delay-ms 20]
 *     [--files 1000] [--file-kib 100] [--readers 8] [--shards 4] [--shard-mib 64] [--repeats 3]
 *
 * Prints, per profile: many small files (first pass, then again on the same mount) in seconds and S3
 * requests counted at the proxy; shards read one after another in MB/s (median of the repeats, each on a
 * fresh mount, so every one starts cold); then the supervisor's kill -9 → serving time and `down` time
 * (supervise-harness.ts, the agent bundle, no delay).
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { s3Client } from '../core/aws';
import { parseAgentConfig } from '../core/config';
import { lookupInstanceType } from '../core/mountpoint/instance-types';
import { Supervisor } from '../core/mountpoint/supervisor';
import { planMounts } from '../core/mountpoint/tuning';
import { runSupervise } from '../test/agent/mountpoint/supervise-harness';
import { unshareTsxArgs } from '../test/support/mount-namespace';
import { FaultProxy } from '../test/support/fault-proxy';
import { MotoServer } from '../test/support/moto';
import { emulatorMountS3, realMountpoint } from '../test/support/real-mountpoint';

const IN_NAMESPACE = 'MOUNTFLEET_BENCH_IN_NAMESPACE';
const SMALL_BUCKET = 'bench-small';
const SHARD_BUCKET = 'bench-shards';

const { values } = parseArgs({
  options: {
    'instance-type': { type: 'string', default: 'g5.xlarge' },
    'delay-ms': { type: 'string', default: '20' },
    files: { type: 'string', default: '1000' },
    'file-kib': { type: 'string', default: '100' },
    readers: { type: 'string', default: '8' },
    shards: { type: 'string', default: '4' },
    'shard-mib': { type: 'string', default: '64' },
    repeats: { type: 'string', default: '3' },
  },
});
const opt = {
  instanceType: values['instance-type'],
  delayMs: Number(values['delay-ms']),
  files: Number(values.files),
  fileBytes: Number(values['file-kib']) * 1024,
  readers: Number(values.readers),
  shards: Number(values.shards),
  shardBytes: Number(values['shard-mib']) * 1024 * 1024,
  repeats: Number(values.repeats),
};

/** Mountpoint arguments (background form, after the program name) for one mount of `bucket` at `mountPoint`. */
interface Profile {
  readonly name: string;
  readonly args: (bucket: string, mountPoint: string, cacheDirectory: string) => string[];
  readonly usesCache: boolean;
}

async function tunedProfile(): Promise<Profile> {
  const instance = await lookupInstanceType(opt.instanceType, undefined, () => undefined);
  return {
    name: `tuned (${opt.instanceType})`,
    usesCache: true,
    args: (bucket, mountPoint, cacheDirectory) => {
      const config = parseAgentConfig({
        version: 1,
        fleetId: 'bench',
        region: 'us-east-1',
        mounts: [{ bucket, path: mountPoint, dataset: 'immutable', cache: 'local' }],
      });
      const plan = planMounts({
        config,
        instance,
        memory: { totalMiB: instance.memoryMiB, source: 'instance type' },
        cacheVolume: { kind: 'root', directory: cacheDirectory, capacityMiB: 20 * 1024, reason: 'bench' },
      });
      return plan.mounts[0].processes[0].args;
    },
  };
}

const defaultsProfile: Profile = {
  name: 'Mountpoint defaults',
  usesCache: false,
  args: (bucket, mountPoint) => [bucket, mountPoint],
};

/** Reads every file below `dir` with `readers` concurrent readers; resolves to the bytes read. */
async function readAll(dir: string, readers: number): Promise<number> {
  const paths = (await readdir(dir)).map((f) => join(dir, f));
  let next = 0;
  let bytes = 0;
  const buffer = () => Buffer.alloc(1024 * 1024);
  await Promise.all(
    Array.from({ length: readers }, async () => {
      const chunk = buffer();
      while (next < paths.length) bytes += await readFile(paths[next++], chunk);
    }),
  );
  return bytes;
}

async function readFile(path: string, chunk: Buffer): Promise<number> {
  const handle = await open(path, 'r');
  try {
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return total;
      total += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (ms: number) => (ms / 1000).toFixed(2);

async function seed(endpoint: string): Promise<void> {
  process.env.AWS_ENDPOINT_URL = endpoint;
  const s3 = s3Client({ maxAttempts: 3 });
  await s3.send(new CreateBucketCommand({ Bucket: SMALL_BUCKET }));
  await s3.send(new CreateBucketCommand({ Bucket: SHARD_BUCKET }));
  const body = randomBytes(opt.fileBytes);
  const keys = Array.from({ length: opt.files }, (_, i) => `img-${String(i).padStart(5, '0')}.jpg`);
  for (let i = 0; i < keys.length; i += 16)
    await Promise.all(
      keys
        .slice(i, i + 16)
        .map((Key) => s3.send(new PutObjectCommand({ Bucket: SMALL_BUCKET, Key, Body: body }))),
    );
  for (let i = 0; i < opt.shards; i++)
    await s3.send(
      new PutObjectCommand({
        Bucket: SHARD_BUCKET,
        Key: `shard-${i}.tar`,
        Body: randomBytes(opt.shardBytes),
      }),
    );
  s3.destroy();
  delete process.env.AWS_ENDPOINT_URL;
}

async function bench(): Promise<void> {
  const real = realMountpoint();
  if ('skip' in real) throw new Error(real.skip);
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-bench-mp-'));
  const moto = await MotoServer.start();
  const proxy = await FaultProxy.start({ target: moto.endpoint });
  const supervisor = new Supervisor(emulatorMountS3(dir, real.binary, proxy.endpoint));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const seedStarted = Date.now();
    await seed(moto.endpoint);
    say(
      `${real.kind} Mountpoint ${real.binary}; moto + ${opt.delayMs} ms per S3 request; ` +
        `seeded ${opt.files} x ${opt.fileBytes / 1024} KiB and ${opt.shards} x ${opt.shardBytes / 1048576} MiB in ${seconds(Date.now() - seedStarted)} s`,
    );
    proxy.addRule({ service: 's3', fault: { kind: 'delay', ms: opt.delayMs } });
    const s3Requests = () => {
      const ops = proxy.stats().byOperation;
      const n = (op: string) => ops[`s3:${op}`]?.requests ?? 0;
      return `${proxy.count('s3')} (GET ${n('GetObject')}, HEAD ${n('HeadObject')}, LIST ${n('ListObjectsV2')})`;
    };
    let run = 0;
    /** Mounts `bucket` with the profile (as the agent's supervisor does), runs `body`, unmounts. */
    const mounted = async <T>(profile: Profile, bucket: string, body: (path: string) => Promise<T>) => {
      const key = `${bucket}-${run++}`;
      const mountPoint = join(dir, 'mnt', key);
      const cacheDirectory = join(dir, 'cache', key);
      const args = profile.args(bucket, mountPoint, cacheDirectory);
      const cache = args.indexOf('--cache');
      await supervisor.start({
        key,
        mountPoint,
        args,
        environment: {},
        ...(cache >= 0 ? { cacheDirectory: args[cache + 1] } : {}),
      });
      try {
        return await body(mountPoint);
      } finally {
        await supervisor.stop(key);
      }
    };

    const profiles = [defaultsProfile, await tunedProfile()];
    for (const profile of profiles) {
      say(`\n${profile.name}: ${profile.args('bucket', '/mnt/bench', '/var/cache/bench').join(' ')}`);
      await mounted(profile, SMALL_BUCKET, async (path) => {
        for (const pass of ['first pass', 'again, same mount']) {
          proxy.resetStats();
          const started = Date.now();
          const bytes = await readAll(path, opt.readers);
          const ms = Date.now() - started;
          say(
            `  small files, ${pass}: ${seconds(ms)} s, ${(bytes / 1e6 / (ms / 1000)).toFixed(1)} MB/s, S3 requests ${s3Requests()}`,
          );
        }
      });
      const rates: number[] = [];
      let requests = '';
      for (let r = 0; r < opt.repeats; r++) {
        await mounted(profile, SHARD_BUCKET, async (path) => {
          proxy.resetStats();
          const started = Date.now();
          const bytes = await readAll(path, 1);
          rates.push(bytes / 1e6 / ((Date.now() - started) / 1000));
          requests = s3Requests();
        });
      }
      say(
        `  shards, one reader, cold: median ${median(rates).toFixed(0)} MB/s ` +
          `(runs ${rates.map((x) => x.toFixed(0)).join(', ')}), S3 requests per run ${requests}`,
      );
    }

    proxy.clear();
    await moto.reset();
    const { result } = await runSupervise(moto.endpoint, real.binary);
    if (result.error) throw new Error(`supervisor scenario: ${result.error}`);
    say(
      `\nsupervisor (up --supervise, 2 mounts, no delay): kill -9 -> serving ${result.restartMs} ms; ` +
        `down ${result.downMs} ms (CLI start-up included), agent signal -> exit ${result.agentStopMs} ms`,
    );
  } finally {
    await supervisor.stopAll();
    await proxy.stop();
    await moto.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Mounts need root and belong in a namespace of their own; 8 readers need more than libuv's 4 threads. */
function reexecInNamespace(): void {
  const child = spawn('unshare', unshareTsxArgs(__filename, process.argv.slice(2)), {
    stdio: 'inherit',
    env: { ...process.env, [IN_NAMESPACE]: '1', UV_THREADPOOL_SIZE: '32' },
  });
  child.once('exit', (code) => (process.exitCode = code ?? 1));
}

if (process.env[IN_NAMESPACE]) {
  bench().catch((e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 1;
  });
} else reexecInNamespace();
