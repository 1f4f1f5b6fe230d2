import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { jsonErrorPlace } from '../core/json.js';
import { CairnError } from '../core/errors.js';
import { dirname } from 'node:path';
import { acquireLock } from './lock.js';
import { openRegularFile } from './read.js';
import { mkdirNoFollow } from './safe.js';
import type { Deadline } from '../core/deadline.js';

// The one JSONL writer and reader. Appends are whole lines in one write() under the advisory lock;
// a torn last line (a crash mid-append) is never glued to: the next append starts on a fresh line.

const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export interface AppendOptions {
  deadline: Deadline;
  /** The directory the log lives inside (the store): no symbolic link on the way is followed (SPEC §2). */
  within: string;
}

/**
 * Append lines to a JSONL file. `build` runs under the lock and sees the last complete line, so
 * callers can derive ordered ids from it; it may check the deadline itself (nothing is written when
 * it throws). Returns the lines written.
 */
export function appendLines(path: string, build: (lastLine: string | undefined) => string[], { deadline, within }: AppendOptions): string[] {
  mkdirNoFollow(within, dirname(path));
  const lock = acquireLock(path, deadline);
  try {
    let fd: number;
    try {
      fd = openSync(path, APPEND_FLAGS, 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CairnError('store', `cannot append to ${path}: ${code === 'ELOOP' ? 'it is a symbolic link; cairn never writes through one' : (err as Error).message}`);
    }
    try {
      const { lastLine, endsWithNewline } = readTail(fd);
      const lines = build(lastLine);
      if (lines.length === 0) return lines;
      // The write is the commit point (SPEC §2): a build that ran past the deadline under the lock
      // records nothing, and the caller keeps its run for later.
      deadline.check('recording the change');
      for (const line of lines) {
        if (line.includes('\n')) throw new CairnError('input', 'a JSONL record may not contain a newline');
      }
      const text = (endsWithNewline ? '' : '\n') + lines.join('\n') + '\n';
      writeAll(fd, Buffer.from(text, 'utf8'));
      return lines;
    } finally {
      closeSync(fd);
    }
  } finally {
    lock.release();
  }
}

function writeAll(fd: number, buf: Buffer): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
}

/** The last complete line of an open file, and whether the file ends cleanly. */
function readTail(fd: number): { lastLine: string | undefined; endsWithNewline: boolean } {
  const size = fstatSync(fd).size;
  if (size === 0) return { lastLine: undefined, endsWithNewline: true };
  const window = Math.min(size, 64 * 1024);
  const buf = Buffer.allocUnsafe(window);
  readSync(fd, buf, 0, window, size - window);
  const endsWithNewline = buf[window - 1] === 0x0a;
  const end = buf.lastIndexOf(0x0a); // end of the last complete line
  if (end < 0) return { lastLine: undefined, endsWithNewline };
  const start = buf.lastIndexOf(0x0a, end - 1) + 1;
  if (start === 0 && size > window) return { lastLine: undefined, endsWithNewline }; // longer than the window
  return { lastLine: buf.toString('utf8', start, end), endsWithNewline };
}

export interface LogLine {
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte offset just past its newline. */
  end: number;
  text: string;
}

/**
 * Complete lines from `from` to the end of the file, read in chunks. A last line without its
 * newline is not returned (it is torn, or still being written). Returns no lines for a missing file.
 */
export function* readLines(path: string, from = 0, chunkSize = 1 << 20): Generator<LogLine> {
  const fd = openRegularFile(path);
  if (fd === undefined) return;
  try {
    let pos = from;
    let carry: Buffer = Buffer.alloc(0);
    const buf = Buffer.allocUnsafe(chunkSize);
    for (;;) {
      const n = readSync(fd, buf, 0, chunkSize, pos);
      if (n === 0) break;
      const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      const base = pos - carry.length;
      let start = 0;
      for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
        yield { offset: base + start, end: base + nl + 1, text: data.toString('utf8', start, nl) };
        start = nl + 1;
      }
      carry = Buffer.from(data.subarray(start));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** Read `length` bytes at `position` (for prefix checks); short at end of file. */
export function readBytes(path: string, position: number, length: number): Buffer {
  const fd = openRegularFile(path);
  if (fd === undefined) return Buffer.alloc(0);
  try {
    const buf = Buffer.alloc(Math.max(0, length));
    const n = readSync(fd, buf, 0, buf.length, position);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

export type ParsedLine<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Parse one JSONL line into an object; never throws. */
export function parseJsonLine<T = Record<string, unknown>>(text: string): ParsedLine<T> {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, reason: 'empty line' };
  try {
    const value = JSON.parse(trimmed) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' };
    return { ok: true, value: value as T };
  } catch (err) {
    return { ok: false, reason: `invalid JSON (${jsonErrorPlace(trimmed, err)})` };
  }
}
