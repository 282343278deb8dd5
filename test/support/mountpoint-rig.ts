/**
 * For a jest file whose tests read buckets through the real Mountpoint (test/support/real-mountpoint.ts):
 * a private mount namespace, the fault proxy in front of this worker's moto (it counts the requests the
 * mounts make), a scratch directory, and helpers to mount, unmount and run the built CLI inside.
 *
 *   const emu = useEmulator();
 *   const real = realMountpointForTests();
 *   const rig = useMountpointRig(emu, real);
 *   const mnt = await rig.mount(['--read-only', 'bucket']);   // flags, then the bucket: the mount point is added
 *   const r = await rig.cli(['bench', 'train', '--path', mnt]);
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BUNDLE } from './cli';
import type { Emulator } from './emulator';
import { FaultProxy } from './fault-proxy';
import { MountNamespace, type RunResult } from './mount-namespace';

/** Polls `condition` (a request count, a process gone) until it holds; fails naming `what` after the timeout. */
export async function until(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface MountpointRig {
  readonly ns: MountNamespace;
  readonly proxy: FaultProxy;
  /** What Mountpoint and the CLI need against moto: any credentials, no IMDS. */
  env(): NodeJS.ProcessEnv;
  /** A new empty directory in the scratch directory. */
  freshDir(name: string): string;
  /** Runs Mountpoint in the background, as the agent does, with `args` (flags, then the bucket) on a fresh mount point. */
  mount(args: readonly string[]): Promise<string>;
  /** Unmounts and waits for the Mountpoint process to exit. */
  unmount(mountPoint: string): Promise<void>;
  /** Runs the built CLI inside the namespace. */
  cli(args: readonly string[], timeoutMs?: number): Promise<RunResult>;
}

export function useMountpointRig(emu: Emulator, real: { readonly binary: string; readonly skip?: string }) {
  let ns: MountNamespace | undefined;
  let proxy: FaultProxy | undefined;
  let dir = '';
  let made = 0;
  beforeAll(async () => {
    if (real.skip) return;
    ns = await MountNamespace.start();
    proxy = await FaultProxy.start({ target: emu.endpoint });
    dir = mkdtempSync(join(tmpdir(), 'mountfleet-rig-'));
  });
  afterAll(async () => {
    await ns?.stop();
    await proxy?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the Mountpoint rig is not started (no real Mountpoint?)');
    return value;
  };
  const rig: MountpointRig = {
    get ns() {
      return started(ns);
    },
    get proxy() {
      return started(proxy);
    },
    env: () => ({
      ...process.env,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
      AWS_EC2_METADATA_DISABLED: 'true',
    }),
    freshDir(name) {
      const d = join(dir, `${name}-${++made}`);
      mkdirSync(d);
      return d;
    },
    async mount(args) {
      const mnt = rig.freshDir('mnt');
      const r = await rig.ns.run(
        [real.binary, '--endpoint-url', rig.proxy.endpoint, '--force-path-style', ...args, mnt],
        { env: rig.env() },
      );
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      return mnt;
    },
    async unmount(mnt) {
      expect((await rig.ns.run(['umount', mnt])).code).toBe(0);
      await until('Mountpoint to exit', () => rig.ns.pidsOf(real.binary, mnt).length === 0);
    },
    cli: (args, timeoutMs = 60_000) =>
      rig.ns.run([process.execPath, CLI_BUNDLE, ...args], { env: rig.env(), timeoutMs }),
  };
  return rig;
}
