/**
 * The few bytes of the tar format a shard needs: POSIX ustar headers, a pax extended header when a
 * name or size does not fit ustar, 512-byte padding and the end-of-archive marker. Written here rather
 * than with tar-stream's packer because the manifest must record the exact offset of every member's
 * data, and that offset follows from the header length, which this module decides. Shards are read
 * back with tar-stream's independent extractor (`mountfleet shard verify`), which keeps this honest.
 */

const BLOCK = 512;
/** Two zero blocks end an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);
/** ustar's 11 octal digits hold sizes below 8 GiB; larger members carry a pax `size` record. */
const USTAR_MAX_SIZE = 0o77777777777;

interface TarMember {
  readonly name: string;
  readonly size: number;
  /** Modification time, seconds since the epoch. */
  readonly mtime: number;
}

function writeString(buf: Buffer, offset: number, length: number, value: string): void {
  buf.write(value, offset, length, 'utf8');
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  writeString(buf, offset, length, value.toString(8).padStart(length - 1, '0') + '\0');
}

function ustarHeader(name: string, size: number, mtime: number, type: '0' | 'x', prefix = ''): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, 0, 100, name);
  writeOctal(h, 100, 8, 0o644);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  writeOctal(h, 124, 12, size);
  writeOctal(h, 136, 12, Math.max(0, Math.floor(mtime)));
  h.fill(' ', 148, 156);
  writeString(h, 156, 1, type);
  writeString(h, 257, 8, 'ustar\u000000');
  writeString(h, 345, 155, prefix);
  let sum = 0;
  for (const byte of h) sum += byte;
  writeString(h, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return h;
}

/** Splits a name into ustar's prefix (<=155 bytes) and name (<=100 bytes) at a slash, when possible. */
function splitUstarName(name: string): { prefix: string; name: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', name };
  for (let i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest.length > 0) {
      return { prefix, name: rest };
    }
  }
  return undefined;
}

/** A pax record `LEN KEY=VALUE\n`, where LEN counts the whole record including its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len)
    len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

export function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest);
}

/** The bytes that precede a member's data: one ustar header, or a pax header, its records and a ustar header. */
export function memberHeader(member: TarMember): Buffer {
  const split = splitUstarName(member.name);
  if (split && member.size <= USTAR_MAX_SIZE) {
    return ustarHeader(split.name, member.size, member.mtime, '0', split.prefix);
  }
  const records = Buffer.from(
    (split ? '' : paxRecord('path', member.name)) +
      (member.size > USTAR_MAX_SIZE ? paxRecord('size', String(member.size)) : ''),
  );
  const shortName = (split?.name ?? Buffer.from(member.name).subarray(0, 100).toString('utf8')).replace(
    /\uFFFD$/,
    '',
  );
  return Buffer.concat([
    ustarHeader(`PaxHeader/${shortName}`.slice(0, 100), records.length, member.mtime, 'x'),
    records,
    padding(records.length),
    ustarHeader(shortName, Math.min(member.size, USTAR_MAX_SIZE), member.mtime, '0', split?.prefix ?? ''),
  ]);
}

/** Bytes a member takes in the archive: header, data, padding to a block. */
export function memberLength(member: TarMember): number {
  return memberHeader(member).length + member.size + padding(member.size).length;
}
