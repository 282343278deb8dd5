/**
 * Quantities as people type and read them: parsing sizes (`30.12GiB`, `256MiB`, `40GB`), durations (`30m`,
 * `54m59s`, `1h30m`, `54:59`, `1:02:03`) and bit rates (`147Mbps`, `128kbps`) from a command line, and the
 * duration texts every report uses (to the second, to the minute, or a few characters for a table column).
 * Binary units (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (kB, MB, GB, TB) powers of 1000,
 * and bit rates are decimal as in every codec specification (1 Mbps = 10^6 bit/s).
 */
import { UsageError } from './errors';

const KIB = 1024;
export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;
export const TIB = 1024 ** 4;

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kib: KIB,
  mib: MIB,
  gib: GIB,
  tib: TIB,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

/**
 * A size, duration or bit rate that does not parse: bad input (exit 2). Told apart from other usage errors so
 * that a flag's reader can name the flag (agent/args.ts) and the plan can say what else it accepts.
 */
export class UnitError extends UsageError {
  override readonly name = 'UnitError';
}

/** Bytes from `256MiB`, `30.12GiB`, `40GB`, or a bare number of bytes. */
export function parseBytes(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? (m[2] || 'b').toLowerCase() : '';
  if (!m || !(unit in SIZE_UNITS)) {
    throw new UnitError(`"${text}" is not a size: use a number with B, KiB, MiB, GiB, TiB, kB, MB, GB or TB`);
  }
  return Number(m[1]) * SIZE_UNITS[unit];
}

/** Seconds from `30m`, `1h30m`, `54m59s`, `90s`, `54:59` (m:s), `1:02:03` (h:m:s) or a bare number of seconds. */
export function parseDuration(text: string): number {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Number(t);
  const clock = /^(?:(\d+):)?(\d{1,2}):(\d{2}(?:\.\d+)?)$/.exec(t);
  if (clock) return Number(clock[1] ?? 0) * 3600 + Number(clock[2]) * 60 + Number(clock[3]);
  const parts = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?$/.exec(t);
  if (parts && t !== '') {
    return Number(parts[1] ?? 0) * 3600 + Number(parts[2] ?? 0) * 60 + Number(parts[3] ?? 0);
  }
  throw new UnitError(`"${text}" is not a duration: use e.g. 30m, 1h30m, 54m59s, 54:59 or seconds`);
}

/** Megabits per second from `147Mbps`, `128kbps`, `1.5Gbps` or a bare number (taken as Mbps). */
export function parseMbps(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(kbps|mbps|gbps)?\s*$/i.exec(text);
  if (!m) throw new UnitError(`"${text}" is not a bit rate: use e.g. 147Mbps, 128kbps or a number of Mbps`);
  const scale = { kbps: 1e-3, mbps: 1, gbps: 1e3 }[
    (m[2] ?? 'mbps').toLowerCase() as 'kbps' | 'mbps' | 'gbps'
  ];
  return Number(m[1]) * scale;
}

/** GiB carried by a stream of `mbps` megabits per second over `seconds`. */
export function gibFromRate(mbps: number, seconds: number): number {
  return (mbps * 1e6 * seconds) / 8 / GIB;
}

/** `6 h 53 min`, `54 min 59 s`, `12 s`: durations as a person reads them. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'never';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(rest).padStart(2, '0')} s`;
  return `${rest} s`;
}

/** `0 min`, `42 min`, `1 h 13 min`: to the nearest minute, never negative (how long until the credit runs out). */
export function formatWholeMinutes(seconds: number): string {
  const minutes = Math.max(0, Math.round(seconds / 60));
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** `45s` (under 2 min), `17m` (under 2 h), `3.5h`: a few characters for a table column (an age). */
export function formatCompactDuration(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${(seconds / 3600).toFixed(1)}h`;
}
