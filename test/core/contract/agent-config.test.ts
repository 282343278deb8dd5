import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CACHE_POLICIES,
  cacheUsesExpress,
  cacheUsesLocal,
  ConfigError,
  defaultCachePolicy,
  MOUNTPOINT_DEFAULT_VERSION,
  MOUNTPOINT_KEY_FINGERPRINT,
  loadAgentConfig,
  parseAgentConfig,
  type AgentConfigInput,
} from '../../../core/contract/agent-config';

const minimal: AgentConfigInput = { version: 1, fleetId: 'train', region: 'us-east-1' };

function problems(value: unknown): string {
  try {
    parseAgentConfig(value, 'agent.json');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected the config to be rejected');
}

describe('agent config schema', () => {
  it('fills defaults for a minimal config', () => {
    const cfg = parseAgentConfig(minimal);
    expect(cfg.mounts).toEqual([]);
    expect(cfg.mountpoint).toEqual({
      version: MOUNTPOINT_DEFAULT_VERSION,
      keyFingerprint: MOUNTPOINT_KEY_FINGERPRINT,
    });
  });

  it('fills mount defaults: read-only, mutable, local+express cache, no prefix', () => {
    const cfg = parseAgentConfig({ ...minimal, mounts: [{ bucket: 'my-data', path: '/mnt/data' }] });
    expect(cfg.mounts[0]).toEqual({
      bucket: 'my-data',
      path: '/mnt/data',
      prefix: '',
      access: 'read-only',
      dataset: 'mutable',
      cache: 'local+express',
    });
  });

  it('normalises a spaced fingerprint as published', () => {
    const cfg = parseAgentConfig({
      ...minimal,
      mountpoint: { version: '1.24.0', keyFingerprint: '8AEF E705 EBE3 29C0 948C  75A6 6F1C 3B3A EF4B 030B' },
    });
    expect(cfg.mountpoint.keyFingerprint).toBe(MOUNTPOINT_KEY_FINGERPRINT);
  });

  it.each([
    [{ ...minimal, version: 2 }, 'version: must be 1'],
    [{ ...minimal, fleetId: 'Train_1' }, 'fleetId: must be 1-32 lower-case'],
    [{ ...minimal, region: 'virginia' }, 'region: must be a Region name'],
    [{ ...minimal, mounts: [{ bucket: 'B', path: '/mnt/a' }] }, 'mounts.0.bucket'],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: 'relative' }] },
      'mounts.0.path: must be an absolute path',
    ],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: '/mnt/a', prefix: 'no-slash' }] },
      'mounts.0.prefix: must be empty or end in "/"',
    ],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: '/mnt/a', access: 'read-write' }] },
      'mounts.0.prefix: a read-write mount needs a prefix',
    ],
    [
      {
        ...minimal,
        mounts: [
          { bucket: 'b-1', path: '/mnt/a' },
          { bucket: 'b-2', path: '/mnt/a/b' },
        ],
      },
      'mounts.1.path: conflicts with mounts[0].path /mnt/a',
    ],
    [{ ...minimal, expressCache: { buckets: { 'us-east-1a': 'c--use1-az4--x-s3' } } }, 'keys must be AZ IDs'],
    [
      { ...minimal, expressCache: { buckets: { 'use1-az4': 'plain-bucket' } } },
      'must be a directory bucket name',
    ],
    [
      { ...minimal, scratch: { securityGroupId: 'sg-1', subnets: { 'use1-az4': 'vpc-1' } } },
      'must be a subnet id',
    ],
    [{ ...minimal, surprise: true }, 'Unrecognized key'],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: '/etc' }] },
      'mounts.0.path: "/etc" is in the system directory /etc',
    ],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: '/mnt/a\nExecStartPre=/bin/sh' }] },
      'mounts.0.path: must not contain control characters',
    ],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: '/mnt/./a' }] },
      'mounts.0.path: must not contain "." or ".." segments',
    ],
    [
      { ...minimal, mounts: [{ bucket: 'b-1', path: '/mnt/a', prefix: 'team-*/', access: 'read-write' }] },
      'mounts.0.prefix: must not contain "*" or "?"',
    ],
    [
      { ...minimal, scratch: { securityGroupId: 'sg-1', subnets: {}, path: '/' } },
      'scratch.path: "/" is a system directory',
    ],
  ])('rejects %j naming the field', (value, message) => {
    expect(problems(value)).toContain(message);
  });

  it('rejects a path that made the old pattern backtrack in milliseconds', () => {
    // /^\/(?:[^/\0]+\/?)*$/ took 10 s on this path under jest here, doubling with each further "a".
    const started = Date.now();
    expect(problems({ ...minimal, mounts: [{ bucket: 'b-1', path: `/${'a'.repeat(28)}//` }] })).toContain(
      'mounts.0.path: must not contain empty segments',
    );
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('loads from a file and names the file in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-config-'));
    const good = join(dir, 'agent.json');
    writeFileSync(good, JSON.stringify(minimal));
    expect(loadAgentConfig(good).fleetId).toBe('train');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ nope');
    expect(() => loadAgentConfig(bad)).toThrow(`agent config ${bad} is not valid JSON`);
    expect(() => loadAgentConfig(join(dir, 'missing.json'))).toThrow(
      'pass --config FILE or set MOUNTFLEET_CONFIG',
    );
  });
});

test('cache policies: which read through the Express cache, which keep a local cache, and the default', () => {
  expect(CACHE_POLICIES.filter(cacheUsesExpress)).toEqual(['express', 'local+express']);
  expect(CACHE_POLICIES.filter(cacheUsesLocal)).toEqual(['local', 'local+express']);
  expect(defaultCachePolicy(true)).toBe('local+express');
  expect(defaultCachePolicy(false)).toBe('local');
});
