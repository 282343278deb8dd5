import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../../../core/aws/clients';
import type { ShardResult } from '../../../core/shard/shard';
import type { VerifyResult } from '../../../core/shard/verify';
import { useEmulator } from '../../support/emulator';
import { runCliInProcess } from '../../support/cli';

useEmulator();

const mountfleet = runCliInProcess;

describe('mountfleet shard', () => {
  it('shards a prefix, resumes as a no-op, and verifies the round trip', async () => {
    const s3 = s3Client({ maxAttempts: 1 });
    await s3.send(new CreateBucketCommand({ Bucket: 'cli-src' }));
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        s3.send(
          new PutObjectCommand({ Bucket: 'cli-src', Key: `imgs/${i}.jpg`, Body: Buffer.alloc(3000 + i, i) }),
        ),
      ),
    );
    await s3.send(new CreateBucketCommand({ Bucket: 'cli-dst' }));
    const flags = [
      '--bucket',
      'cli-src',
      '--prefix',
      'imgs',
      '--dest-bucket',
      'cli-dst',
      '--dest-prefix',
      'tars',
    ];

    const first = await mountfleet('shard', ...flags, '--target-size', '40KiB', '--json');
    expect(first.code).toBe(0);
    const result = JSON.parse(first.stdout) as ShardResult;
    expect(result).toMatchObject({ objects: 30, skipped: 0, dest: { bucket: 'cli-dst', prefix: 'tars/' } });
    expect(result.shards.length).toBe(3);
    expect(first.stderr).toMatch(/tars\/shard-000002\.tar: \d+ objects/);

    const again = await mountfleet('shard', ...flags, '--target-size', '40KiB');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/30 objects .* in 3 shards: 0 written, 3 already done/);

    const verified = await mountfleet('shard', 'verify', ...flags, '--source', 'content', '--json');
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout) as VerifyResult).toMatchObject({ ok: true, shards: 3, objects: 30 });

    await s3.send(new PutObjectCommand({ Bucket: 'cli-src', Key: 'imgs/0.jpg', Body: 'replaced' }));
    const stale = await mountfleet('shard', 'verify', ...flags);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/problem: source imgs\/0.jpg changed since sharding/);
  });

  it('rejects a bad target size and an unknown action', async () => {
    const bad = await mountfleet(
      'shard',
      '--bucket',
      'b',
      '--prefix',
      'p',
      '--dest-prefix',
      'q',
      '--target-size',
      'big',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--target-size/);
    const unknown = await mountfleet('shard', 'list', '--bucket', 'b', '--dest-prefix', 'q');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown action "list"/);
  });

  it('refuses a count that is not a whole number instead of using the default', async () => {
    const flags = ['--bucket', 'b', '--prefix', 'p', '--dest-prefix', 'q'];
    const concurrency = await mountfleet('shard', ...flags, '--concurrency', 'abc');
    expect(concurrency.code).toBe(2);
    expect(concurrency.stderr).toMatch(/--concurrency "abc": must be a whole number from 1 to 1024/);
    const rangeChecks = await mountfleet('shard', 'verify', ...flags, '--range-checks', '2.5');
    expect(rangeChecks.code).toBe(2);
    expect(rangeChecks.stderr).toMatch(/--range-checks "2.5": must be a whole number from 0 to 100000/);
  });
});
