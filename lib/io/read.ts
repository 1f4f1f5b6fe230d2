import { closeSync, constants, createReadStream, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { CairnError } from '../core/errors.js';

// The one bounded reader (SPEC §2): a cap, a time limit, no read that blocks the thread (the timer could not end it).

export const DEFAULT_INPUT_CAP = 8 * 1024 * 1024;

export interface InputLimits {
  cap: number;
  waitMs: number;
}

export interface BoundedInput {
  bytes: Buffer;
  truncated: boolean;
  timedOut: boolean;
}

// node:net only to read a pipe a flag names (start-up cost)
const require = createRequire(import.meta.url);

const NONE: BoundedInput = { bytes: Buffer.alloc(0), truncated: false, timedOut: false };

// O_NONBLOCK: a FIFO without a writer opens at once; a device read that would wait fails instead
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);

/** A terminal is never read (it would wait for a person). */
export async function readStdinBounded(limits: InputLimits): Promise<BoundedInput> {
  let st: Stats;
  try {
    st = fstatSync(0);
  } catch {
    return NONE; // stdin closed by the caller
  }
  if (st.isFile()) return readRegular(0, limits.cap);
  // tty only for a device (start-up cost)
  if (st.isCharacterDevice() && (await import('node:tty')).isatty(0)) return NONE;
  // a non-blocking pipe or socket, or a device read in the thread pool
  return collect(process.stdin, limits, 'stdin');
}

export async function readPathBounded(path: string, limits: InputLimits, what: string): Promise<BoundedInput> {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (err) {
    throw new CairnError('input', `cannot read ${what}: ${errnoText(err)}`);
  }
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    throw new CairnError('input', `cannot read ${what}: ${errnoText(err)}`);
  }
  if (st.isFile()) {
    try {
      return readRegular(fd, limits.cap);
    } finally {
      closeSync(fd);
    }
  }
  if (st.isFIFO() || st.isSocket())
    return collect(new (require('node:net') as typeof import('node:net')).Socket({ fd, readable: true, writable: false }), limits, what);
  if (st.isCharacterDevice()) return collect(createReadStream('', { fd, highWaterMark: 64 * 1024 }), limits, what);
  closeSync(fd);
  throw new CairnError('input', `cannot read ${what}: ${st.isDirectory() ? 'it is a directory' : 'not a file, pipe or device'}`);
}

/** Only a regular file (a link to /dev/zero reads forever); `noFollow` refuses a link too. */
export function openRegularFile(path: string, noFollow = false): number | undefined {
  return openRegular(path, noFollow ? `${path} is a symbolic link; cairn never writes through one` : undefined);
}

/** A clone may bring a symbolic link pointing at any file (SPEC §2). */
export function openLog(path: string): number | undefined {
  return openRegular(path, `${path} is not a regular file but a symbolic link; cairn reads no log through one`);
}

function openRegular(path: string, linkRefused: string | undefined): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS | (linkRefused ? constants.O_NOFOLLOW : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' && linkRefused) throw new CairnError('store', linkRefused);
    throw new CairnError('store', `cannot read ${path}: ${errnoText(err)}`);
  }
  let regular = false;
  try {
    regular = fstatSync(fd).isFile();
  } finally {
    if (!regular) closeSync(fd);
  }
  if (!regular) throw new CairnError('store', `${path} is not a regular file`);
  return fd;
}

/** Undefined when missing. */
export function readSmallFile(path: string, cap: number, noFollow = false): Buffer | undefined {
  return readWhole(path, openRegularFile(path, noFollow), cap);
}

export function readSmallLog(path: string, cap: number): Buffer | undefined {
  return readWhole(path, openLog(path), cap);
}

function readWhole(path: string, fd: number | undefined, cap: number): Buffer | undefined {
  if (fd === undefined) return undefined;
  try {
    const { bytes, truncated } = readRegular(fd, cap);
    if (truncated) throw new CairnError('store', `${path} is larger than ${cap} bytes`);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

export function readFileTail(path: string, bytes: number): Buffer | undefined {
  const fd = openRegularFile(path);
  if (fd === undefined) return undefined;
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buf = Buffer.alloc(length);
    const n = readSync(fd, buf, 0, length, size - length);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Its size may be 0 and still hold data, as in /proc. */
function readRegular(fd: number, cap: number): BoundedInput {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, cap + 1 - total));
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
    if (total > cap) break;
  }
  const bytes = Buffer.concat(chunks, total);
  return total > cap ? { bytes: bytes.subarray(0, cap), truncated: true, timedOut: false } : { bytes, truncated: false, timedOut: false };
}

function collect(stream: Readable, limits: InputLimits, what: string): Promise<BoundedInput> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (outcome: BoundedInput | CairnError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.destroy(); // a writer that never closes cannot keep the process alive
      if (outcome instanceof CairnError) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => settle({ bytes: Buffer.concat(chunks, total), truncated: false, timedOut: true }), limits.waitMs);
    stream.on('data', (chunk: Buffer) => {
      if (total + chunk.length >= limits.cap) {
        const rest = chunk.subarray(0, limits.cap - total);
        chunks.push(rest);
        total += rest.length;
        settle({ bytes: Buffer.concat(chunks, total), truncated: true, timedOut: false });
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    });
    stream.once('end', () => settle({ bytes: Buffer.concat(chunks, total), truncated: false, timedOut: false }));
    stream.once('error', (err) => settle(new CairnError('input', `cannot read ${what}: ${errnoText(err)}`)));
  });
}

function errnoText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const known: Record<string, string> = {
    ENOENT: 'no such file',
    EACCES: 'permission denied',
    EISDIR: 'it is a directory',
    EAGAIN: 'a device with nothing to read',
    ELOOP: 'a symbolic link loop',
  };
  return (e.code && known[e.code]) ?? e.code ?? e.message ?? String(err);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Drops a partial last character when cut; binary data (invalid UTF-8, NUL) is bad input. */
export function decodeUtf8Prefix(bytes: Buffer, cut: boolean, what = 'stdin'): string {
  let end = bytes.length;
  if (cut) {
    let back = 0;
    while (back < 3 && end - back - 1 >= 0 && (bytes[end - back - 1] & 0xc0) === 0x80) back++;
    const lead = end - back - 1;
    if (lead >= 0) {
      const b = bytes[lead];
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (need > back + 1) end = lead;
    }
  }
  const text = bytes.subarray(0, end);
  if (text.includes(0)) throw new CairnError('input', `${what} holds binary data (a NUL byte), not text`);
  try {
    return UTF8.decode(text);
  } catch {
    throw new CairnError('input', `${what} is not valid UTF-8 text`);
  }
}
