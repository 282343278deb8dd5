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
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { s3Client } from '../core/aws/clients';
import { readFiles } from '../core/measure/read';
import { runSupervise } from '../test/agent/commands/up/supervise-harness';
import {
  agentProfile,
  benchInOwnNamespace,
  defaultsProfile,
  withBenchRig,
  type MountProfile,
} from './mount-rig';

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

interface Profile {
  readonly name: string;
  readonly forBucket: (bucket: string) => Promise<MountProfile>;
}

const profiles: Profile[] = [
  { name: 'Mountpoint defaults', forBucket: (bucket) => Promise.resolve(defaultsProfile(bucket)) },
  {
    name: `tuned (${opt.instanceType})`,
    forBucket: (bucket) => agentProfile({ instanceType: opt.instanceType, bucket, cache: 'local' }),
  },
];

/** Reads every file in `dir` (flat, no stat: a lookup per file as a loader does) with `readers` readers. */
async function readAll(dir: string, readers: number): Promise<number> {
  return readFiles(
    (await readdir(dir)).map((f) => join(dir, f)),
    readers,
  );
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
  await withBenchRig('mp', async ({ real, moto, proxy, mounts: rig }) => {
    const say = (line: string) => process.stdout.write(`${line}\n`);
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
    for (const profile of profiles) {
      const shown = (await profile.forBucket('bucket'))('/mnt/bench', '/var/cache/bench', '/run/bench');
      say(`\n${profile.name}: ${shown.args.join(' ')}`);
      const small = await profile.forBucket(SMALL_BUCKET);
      const shards = await profile.forBucket(SHARD_BUCKET);
      await rig.mounted(small, async (path) => {
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
        await rig.mounted(shards, async (path) => {
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
  });
}

benchInOwnNamespace(__filename, bench);
