/**
 * The agent's Mountpoint profile against Mountpoint's defaults, on the real Mountpoint (the harness, or
 * MOUNTFLEET_MOUNT_S3), with a fixed delay on every S3 request (the fault proxy in front of moto). Needs root;
 * it re-runs itself in a private mount namespace.
 *
 *   node scripts/bundle.mjs && npx tsx bench/mountpoint.ts [--instance-type g5.xlarge] [--delay-ms 20]
 *     [--files 1000] [--file-kib 100] [--readers 8] [--shards 4] [--shard-mib 64[,256,...]] [--repeats 3]
 *     [--ceiling-part-mib 8] [--ceiling-connections 16] [--no-supervisor] [--variant 'no-cache part-mib=16' ...]
 *
 * Prints, per profile: many small files (first pass, then again on the same mount; `--files 0` skips them) in
 * seconds and S3 requests counted at the proxy; for each shard size, the shards read one after another in MB/s
 * (median of the repeats, each on a fresh mount, so every one starts cold) beside the rig's ceiling: the same
 * shards read with `--ceiling-connections` parallel ranged GETs of `--ceiling-part-mib` through the same proxy
 * and delay (the AWS SDK, no file system); then the supervisor's kill -9 → serving time and `down` time
 * (supervise-harness.ts, the agent bundle, no delay).
 *
 * Each `--variant` (repeatable) adds the agent's profile changed by its words: `no-cache` drops the local cache
 * (`--cache`, `--max-cache-size`), `part-mib=N` renders `--read-part-size` N MiB: what-ifs beside the profile.
 */
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
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
    'ceiling-part-mib': { type: 'string', default: '8' },
    'ceiling-connections': { type: 'string', default: '16' },
    'no-supervisor': { type: 'boolean', default: false },
    variant: { type: 'string', multiple: true, default: [] },
  },
});
const opt = {
  instanceType: values['instance-type'],
  delayMs: Number(values['delay-ms']),
  files: Number(values.files),
  fileBytes: Number(values['file-kib']) * 1024,
  readers: Number(values.readers),
  shards: Number(values.shards),
  shardSizesMiB: values['shard-mib'].split(',').map(Number),
  repeats: Number(values.repeats),
  ceilingPartBytes: Number(values['ceiling-part-mib']) * 1024 * 1024,
  ceilingConnections: Number(values['ceiling-connections']),
  supervisor: !values['no-supervisor'],
};
for (const [name, n] of Object.entries({ ...opt, shardSizesMiB: Math.min(...opt.shardSizesMiB) }))
  if (typeof n === 'number' && !(n >= 0)) throw new Error(`--${name}: not a number`);

interface Profile {
  readonly name: string;
  readonly forBucket: (bucket: string, prefix?: string) => Promise<MountProfile>;
}

const tuned = (bucket: string, prefix?: string) =>
  agentProfile({ instanceType: opt.instanceType, bucket, ...(prefix ? { prefix } : {}), cache: 'local' });

/** The agent's arguments changed by one `--variant`'s words; an unknown word is an error before anything runs. */
function varied(words: string): (args: readonly string[]) => string[] {
  const edits = words.split(/\s+/).map((word): ((args: string[]) => void) => {
    const drop = (args: string[], flag: string) => {
      const i = args.indexOf(flag);
      if (i >= 0) args.splice(i, 2);
    };
    if (word === 'no-cache')
      return (args) => {
        drop(args, '--cache');
        drop(args, '--max-cache-size');
      };
    const part = /^part-mib=(\d+)$/.exec(word);
    if (part)
      return (args) => {
        drop(args, '--read-part-size');
        args.unshift('--read-part-size', String(Number(part[1]) * 1024 * 1024));
      };
    throw new Error(`--variant '${words}': unknown word '${word}' (use no-cache or part-mib=N)`);
  });
  return (args) => {
    const changed = [...args];
    for (const edit of edits) edit(changed);
    return changed;
  };
}

const profiles: Profile[] = [
  {
    name: 'Mountpoint defaults',
    forBucket: (bucket, prefix) => Promise.resolve(defaultsProfile(bucket, prefix)),
  },
  { name: `tuned (${opt.instanceType})`, forBucket: tuned },
  ...values.variant.map((words): Profile => {
    const change = varied(words);
    return {
      name: `tuned, ${words}`,
      forBucket: async (bucket, prefix) => {
        const profile = await tuned(bucket, prefix);
        return (...dirs) => {
          const p = profile(...dirs);
          return { ...p, args: change(p.args) };
        };
      },
    };
  }),
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
const MIB = 1024 * 1024;
/** Where the shards of one size are: `mib-64/shard-0.tar` ... */
const shardPrefix = (mib: number) => `mib-${mib}/`;
const shardKeys = (mib: number) =>
  Array.from({ length: opt.shards }, (_, i) => `${shardPrefix(mib)}shard-${i}.tar`);

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
  for (const mib of opt.shardSizesMiB) {
    const shard = randomBytes(mib * MIB);
    for (const Key of shardKeys(mib))
      await s3.send(new PutObjectCommand({ Bucket: SHARD_BUCKET, Key, Body: shard }));
  }
  s3.destroy();
  delete process.env.AWS_ENDPOINT_URL;
}

/**
 * The rig's ceiling for one shard: `connections` ranged GETs of `partBytes` in flight at a time through the
 * proxy (its delay included), the body of each drained and counted. What the emulator and the proxy can serve,
 * with no file system, no prefetcher and no window to ramp up.
 */
async function rangedRead(s3: S3Client, key: string, size: number, partBytes: number, connections: number) {
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < size) {
      const start = next;
      next = Math.min(size, next + partBytes);
      const res = await s3.send(
        new GetObjectCommand({ Bucket: SHARD_BUCKET, Key: key, Range: `bytes=${start}-${next - 1}` }),
      );
      for await (const chunk of res.Body as AsyncIterable<Uint8Array>) bytes += chunk.length;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return bytes;
}

async function bench(): Promise<void> {
  await withBenchRig('mp', async ({ real, moto, proxy, mounts: rig }) => {
    const say = (line: string) => process.stdout.write(`${line}\n`);
    const seedStarted = Date.now();
    await seed(moto.endpoint);
    say(
      `${real.kind} Mountpoint ${real.binary}; moto + ${opt.delayMs} ms per S3 request; ` +
        `seeded ${opt.files} x ${opt.fileBytes / 1024} KiB and ${opt.shards} x ${opt.shardSizesMiB.join(', ')} MiB in ${seconds(Date.now() - seedStarted)} s`,
    );
    proxy.addRule({ service: 's3', fault: { kind: 'delay', ms: opt.delayMs } });
    const s3Requests = () => {
      const ops = proxy.stats().byOperation;
      const n = (op: string) => ops[`s3:${op}`]?.requests ?? 0;
      return `${proxy.count('s3')} (GET ${n('GetObject')}, HEAD ${n('HeadObject')}, LIST ${n('ListObjectsV2')})`;
    };
    /** MB/s by shard size and profile, for the summary. */
    const table = new Map<number, Map<string, number>>();
    const record = (mib: number, name: string, rate: number) =>
      table.set(mib, (table.get(mib) ?? new Map<string, number>()).set(name, rate));

    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
    const direct = s3Client({ maxAttempts: 3 });
    const ceilingName = `ceiling (${opt.ceilingPartBytes / MIB} MiB GETs x ${opt.ceilingConnections})`;
    for (const mib of opt.shardSizesMiB) {
      const rates: number[] = [];
      for (let r = 0; r < opt.repeats; r++) {
        const started = Date.now();
        let bytes = 0;
        for (const key of shardKeys(mib))
          bytes += await rangedRead(direct, key, mib * MIB, opt.ceilingPartBytes, opt.ceilingConnections);
        rates.push(bytes / 1e6 / ((Date.now() - started) / 1000));
      }
      record(mib, ceilingName, median(rates));
      say(
        `${ceilingName}, ${mib} MiB shards: median ${median(rates).toFixed(0)} MB/s (runs ${rates.map((x) => x.toFixed(0)).join(', ')})`,
      );
    }
    direct.destroy();
    delete process.env.AWS_ENDPOINT_URL;

    for (const profile of profiles) {
      const shown = (await profile.forBucket('bucket'))('/mnt/bench', '/var/cache/bench', '/run/bench');
      say(`\n${profile.name}: ${shown.args.join(' ')}`);
      if (opt.files > 0) {
        const small = await profile.forBucket(SMALL_BUCKET);
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
      }
      for (const mib of opt.shardSizesMiB) {
        const shards = await profile.forBucket(SHARD_BUCKET, shardPrefix(mib));
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
        record(mib, profile.name, median(rates));
        say(
          `  ${opt.shards} x ${mib} MiB shards, one reader, cold: median ${median(rates).toFixed(0)} MB/s ` +
            `(runs ${rates.map((x) => x.toFixed(0)).join(', ')}), S3 requests per run ${requests}`,
        );
      }
    }

    say(
      '\nshard MiB   ' + [...(table.values().next().value?.keys() ?? [])].map((n) => n.padStart(28)).join(''),
    );
    for (const [mib, rates] of table) {
      const ceiling = rates.get(ceilingName) ?? NaN;
      say(
        `${String(mib).padStart(9)}   ` +
          [...rates.values()]
            .map((x) => `${x.toFixed(0)} MB/s (${((x / ceiling) * 100).toFixed(0)} %)`.padStart(28))
            .join(''),
      );
    }

    if (!opt.supervisor) return;
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
