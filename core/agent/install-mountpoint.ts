/**
 * Installs the pinned Mountpoint release: download the package and its detached signature, verify the
 * signature with gpg in a throw-away keyring holding only the release key (whose fingerprint must be the
 * pinned one), then install with the distribution's package manager, retried because boot-time package
 * managers collide. Skipped when `mount-s3 --version` already reports the pinned version.
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MountfleetError, pollUntil, systemClock, type Clock, type PollResult } from '../common';
import { execCommand, type CommandRunner } from './command-runner';

const DEFAULT_RELEASE_URL = 'https://s3.amazonaws.com/mountpoint-s3-release';
const DEFAULT_KEYS_URL = 'https://s3.amazonaws.com/mountpoint-s3-release/public_keys/KEYS';

type PackageFormat = 'rpm' | 'deb';

export interface InstallOptions {
  readonly version: string;
  /** 40 hex digits, no spaces. */
  readonly keyFingerprint: string;
  /** Where `<VERSION>/<arch>/mount-s3-<VERSION>-<arch>.<rpm|deb>` live (MOUNTFLEET_MOUNTPOINT_RELEASE_URL). */
  readonly releaseUrl?: string;
  /** The armored public key file (MOUNTFLEET_MOUNTPOINT_KEYS_URL). */
  readonly keysUrl?: string;
  /** The Mountpoint binary to check first. */
  readonly mountS3: string;
  readonly architecture?: 'x86_64' | 'arm64';
  readonly format?: PackageFormat;
  /** Runs the package manager; tests pass a recorder so nothing is installed on the test machine. */
  readonly installPackage?: (file: string, format: PackageFormat) => Promise<void>;
  readonly attempts?: number;
  readonly clock?: Clock;
  readonly log?: (message: string) => void;
}

type InstallResult =
  | { readonly action: 'skipped'; readonly version: string }
  | {
      readonly action: 'installed';
      readonly version: string;
      readonly package: string;
      readonly attempts: number;
    };

/** The release does not verify against the pinned key: the agent stops (docs/troubleshooting.md names it). */
export class SignatureError extends MountfleetError {
  override readonly name = 'SignatureError';
}

/** The version `mount-s3 --version` prints, or undefined when the binary is absent or says otherwise. */
async function installedVersion(mountS3: string): Promise<string | undefined> {
  if (!existsSync(mountS3)) return undefined;
  try {
    const { stdout } = await promisify(execFile)(mountS3, ['--version'], { timeout: 10_000 });
    return /mount-s3 (\d+\.\d+\.\d+)/.exec(stdout)?.[1];
  } catch {
    return undefined;
  }
}

function packageArchitecture(): 'x86_64' | 'arm64' {
  return arch() === 'arm64' ? 'arm64' : 'x86_64';
}

/** rpm on Amazon Linux / RHEL family, deb on Debian / Ubuntu (from /etc/os-release). */
function packageFormat(osRelease = '/etc/os-release'): PackageFormat {
  const text = existsSync(osRelease) ? readFileSync(osRelease, 'utf8') : '';
  return /^ID(_LIKE)?=.*\b(debian|ubuntu)\b/m.test(text) ? 'deb' : 'rpm';
}

function packageUrl(
  releaseUrl: string,
  version: string,
  architecture: string,
  format: PackageFormat,
): string {
  return `${releaseUrl.replace(/\/+$/, '')}/${version}/${architecture}/mount-s3-${version}-${architecture}.${format}`;
}

/**
 * The most each download may be (after any content-encoding is undone), so a wrong or hostile release
 * server (MOUNTFLEET_MOUNTPOINT_RELEASE_URL) cannot fill the agent's memory or disk before gpg has looked:
 * mount-s3 1.24's packages are about 10 MB, a detached armored signature under 1 KB, the key file a few KB.
 */
const MAX_PACKAGE_BYTES = 256 * 1024 * 1024;
export const MAX_SIGNATURE_BYTES = 64 * 1024;
const MAX_KEYS_BYTES = 1024 * 1024;

/**
 * GET `url` into `file`, streamed (never held in memory whole), refused past `maxBytes` (by its
 * Content-Length at once, else at the byte that passes it) and past 120 s in all.
 */
export async function download(url: string, file: string, maxBytes: number): Promise<void> {
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  const tooLarge = () => new Error(`GET ${url}: larger than ${maxBytes} bytes, refused`);
  if (!res.ok || Number(res.headers.get('content-length')) > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw res.ok ? tooLarge() : new Error(`GET ${url}: HTTP ${res.status}`);
  }
  const out = openSync(file, 'w', 0o600);
  try {
    let size = 0;
    for await (const chunk of res.body ?? []) {
      size += (chunk as Uint8Array).length;
      if (size > maxBytes) throw tooLarge(); // leaving the loop cancels the body
      writeSync(out, chunk as Uint8Array);
    }
  } finally {
    closeSync(out);
  }
}

/**
 * Verifies `file` against `signature` with only the key in `keysFile`, whose primary fingerprint must be
 * `fingerprint`. Throws SignatureError otherwise.
 */
async function verifySignature(
  file: string,
  signature: string,
  keysFile: string,
  fingerprint: string,
  run: CommandRunner = execCommand,
): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'mountfleet-gnupg-'));
  const gpg = (...args: string[]) => run('gpg', ['--homedir', home, '--batch', '--no-tty', ...args]);
  try {
    await gpg('--import', keysFile);
    const listing = await gpg('--with-colons', '--fingerprint', '--list-keys');
    const primaries = listing
      .split('\n')
      .map((l, i, all) =>
        l.startsWith('pub:') ? all.slice(i + 1).find((x) => x.startsWith('fpr:')) : undefined,
      )
      .filter((l): l is string => Boolean(l))
      .map((l) => l.split(':')[9]);
    if (primaries.length !== 1 || primaries[0] !== fingerprint) {
      throw new SignatureError(
        `release key file holds ${primaries.join(', ') || 'no key'}; expected exactly ${fingerprint}`,
      );
    }
    // --status-fd lets us require a good signature from *that* key, not merely "some key in the ring".
    let status: string;
    try {
      status = await gpg('--status-fd', '1', '--verify', signature, file);
    } catch (e) {
      throw new SignatureError(`bad signature on ${file}: ${(e as Error).message}`);
    }
    // VALIDSIG <signing key fpr> <date> <ts> <expiry> <version> <reserved> <algo> <hash> <class> <primary fpr>
    const validsig = /^\[GNUPG:\] VALIDSIG (.*)$/m.exec(status)?.[1].split(' ') ?? [];
    const signedBy = validsig[9] ?? validsig[0];
    if (!/^\[GNUPG:\] GOODSIG /m.test(status) || signedBy !== fingerprint) {
      throw new SignatureError(`signature on ${file} is not a good signature by ${fingerprint}`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The system package manager: dnf, yum or apt-get, whichever exists. */
const systemInstallPackage = async (file: string, format: PackageFormat): Promise<void> => {
  if (format === 'deb') {
    await execCommand('apt-get', ['install', '-y', file]);
  } else if (existsSync('/usr/bin/dnf')) {
    await execCommand('dnf', ['install', '-y', file]);
  } else {
    await execCommand('yum', ['install', '-y', file]);
  }
};

export async function installMountpoint(options: InstallOptions): Promise<InstallResult> {
  const log = options.log ?? (() => {});
  const present = await installedVersion(options.mountS3);
  if (present === options.version) {
    log(`Mountpoint ${present} already installed at ${options.mountS3}`);
    return { action: 'skipped', version: present };
  }
  const format = options.format ?? packageFormat();
  const url = packageUrl(
    options.releaseUrl ?? DEFAULT_RELEASE_URL,
    options.version,
    options.architecture ?? packageArchitecture(),
    format,
  );
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-install-'));
  try {
    const file = join(dir, url.split('/').pop()!);
    log(`downloading ${url}`);
    await download(url, file, MAX_PACKAGE_BYTES);
    await download(`${url}.asc`, `${file}.asc`, MAX_SIGNATURE_BYTES);
    await download(options.keysUrl ?? DEFAULT_KEYS_URL, join(dir, 'KEYS'), MAX_KEYS_BYTES);
    await verifySignature(file, `${file}.asc`, join(dir, 'KEYS'), options.keyFingerprint);
    log(`signature verified: ${options.keyFingerprint}`);
    const attempts = await installRetried(options, file, format, log);
    return { action: 'installed', version: options.version, package: url, attempts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the package manager until it succeeds (resolving to the attempts it took) or `attempts` have failed
 * (the last failure is thrown): boot-time package managers collide over their lock, so each failure waits
 * pollUntil's backoff (2 s doubling to 30 s, jittered) before the next attempt.
 */
async function installRetried(
  options: InstallOptions,
  file: string,
  format: PackageFormat,
  log: (message: string) => void,
): Promise<number> {
  const install = options.installPackage ?? systemInstallPackage;
  const attempts = options.attempts ?? 5;
  const clock = options.clock ?? systemClock;
  let attempt = 0;
  let failure = '';
  // Each retry is logged with its wait: the sleep pollUntil chose.
  const sayingRetries: Clock = {
    now: () => clock.now(),
    sleep: (ms, signal) => {
      log(`package install failed (${failure}); retry ${attempt + 1}/${attempts} in ${ms} ms`);
      return clock.sleep(ms, signal);
    },
  };
  const tryInstall = async (): Promise<PollResult<number>> => {
    attempt++;
    try {
      await install(file, format);
      return { value: attempt };
    } catch (e) {
      if (attempt >= attempts) throw e;
      failure = (e as Error).message;
      return { state: failure };
    }
  };
  return pollUntil(tryInstall, {
    clock: sayingRetries,
    timeoutMs: Infinity,
    initialPollMs: 2000,
    maxPollMs: 30_000,
  });
}
