import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { s3ExpressClient } from '../../../core/aws/clients';
import { probeExpressBucket, type ProbeResult } from '../../../core/agent/express-probe';
import { ExpressWatchdog } from '../../../core/agent/express-watchdog';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';

const emu = useEmulator();
const BUCKET = 'cache--use1-az4--x-s3';

describe('probe against the emulator, through the fault proxy', () => {
  let proxy: FaultProxy;
  beforeEach(async () => {
    await s3ExpressClient({ maxAttempts: 1 }).send(new CreateBucketCommand({ Bucket: BUCKET }));
    proxy = await FaultProxy.start({ target: emu.endpoint });
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
  });
  afterEach(async () => {
    process.env.AWS_ENDPOINT_URL = emu.endpoint;
    await proxy.stop();
  });

  test('a healthy zone bucket answers HeadBucket', async () => {
    const r = await probeExpressBucket(s3ExpressClient({ maxAttempts: 1 }), BUCKET, 1500);
    expect(r).toMatchObject({ healthy: true });
    expect(proxy.count('s3', 'HeadBucket')).toBe(1);
  });

  test('a black-holed zone fails the probe at its deadline, not after the SDK timeouts', async () => {
    proxy.addRule({ service: 's3', fault: { kind: 'blackhole' } });
    const started = Date.now();
    const r = await probeExpressBucket(s3ExpressClient({ maxAttempts: 1 }), BUCKET, 700);
    expect(r.healthy).toBe(false);
    expect(r.detail).toMatch(/timed out after 700 ms/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  test('stopping the watchdog cancels a probe in flight instead of waiting out its deadline', async () => {
    proxy.addRule({ service: 's3', fault: { kind: 'blackhole' } });
    const client = s3ExpressClient({ maxAttempts: 1 });
    const results: ProbeResult[] = [];
    const watchdog = new ExpressWatchdog({
      probe: (cancel) => probeExpressBucket(client, BUCKET, 5000, undefined, cancel),
      onProbe: (r) => results.push(r),
      intervalMs: 1000,
      initiallyHealthy: true,
      onChange: () => undefined,
    });
    const stop = new AbortController();
    const running = watchdog.run(stop.signal);
    while (proxy.count('s3', 'HeadBucket') === 0) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    stop.abort();
    await running;
    expect(Date.now() - started).toBeLessThan(500);
    expect(results).toEqual([]); // a cancelled probe is no evidence about the zone
    client.destroy();
  });

  test('a missing bucket is unhealthy too', async () => {
    const r = await probeExpressBucket(s3ExpressClient({ maxAttempts: 1 }), 'gone--use1-az4--x-s3', 1500);
    expect(r).toMatchObject({ healthy: false });
    expect(r.detail).toMatch(/failed/);
  });
});

describe('watchdog hysteresis', () => {
  const ok: ProbeResult = { healthy: true, latencyMs: 5, detail: 'ok' };
  const bad: ProbeResult = { healthy: false, latencyMs: 1500, detail: 'timed out' };

  test('two failures in a row trip it; three successes bring it back; a lone blip does nothing', async () => {
    const changes: [boolean, number][] = [];
    const w = new ExpressWatchdog({
      probe: async () => ok,
      intervalMs: 2000,
      initiallyHealthy: true,
      onChange: (healthy, e) => {
        changes.push([healthy, e.decidedAt - e.firstSignAt]);
      },
    });
    const feed = async (results: ProbeResult[], t0: number) => {
      for (const [i, r] of results.entries()) await w.record(r, t0 + i * 2000, t0 + i * 2000 + r.latencyMs);
    };
    await feed([bad, ok, bad, ok], 0);
    expect(changes).toEqual([]);
    await feed([bad, bad], 10_000);
    expect(changes).toEqual([[false, 3500]]);
    await feed([ok, ok, bad, ok, ok], 20_000);
    expect(w.healthy).toBe(false);
    await feed([ok], 30_000);
    expect(changes).toEqual([
      [false, 3500],
      [true, 4005],
    ]);
    expect(w.healthy).toBe(true);
  });
});
