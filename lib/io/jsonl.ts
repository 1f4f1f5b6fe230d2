import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { jsonErrorPlace } from '../core/json.js';
import { CairnError } from '../core/errors.js';
import { dirname } from 'node:path';
import { acquireLock } from './lock.js';
import { openLog } from './read.js';
import { mkdirNoFollow } from './safe.js';
import type { Deadline } from '../core/deadline.js';

// The one JSONL writer and reader: whole lines in one write() under the lock; a torn last line is never glued to.

const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export interface AppendOptions {
  deadline: Deadline;
  /** No symbolic link on the way is followed (SPEC §2). */
  within: string;
}

/** `build` sees the last complete line and may throw. */
export function appendLines(path: string, build: (lastLine: string | undefined) => string[], opts: AppendOptions): string[] {
  let lines: string[] = [];
  appendUnderLock(path, opts, (fd, { lastLine, endsWithNewline }) => {
    lines = build(lastLine);
    if (lines.length === 0) return;
    // the commit point (SPEC §2): past the deadline nothing is recorded
    opts.deadline.check('recording the change');
    for (const line of lines) {
      if (line.includes('\n')) throw new CairnError('input', 'a JSONL record may not contain a newline');
    }
    writeAll(fd, Buffer.from((endsWithNewline ? '' : '\n') + lines.join('\n') + '\n', 'utf8'));
  });
  return lines;
}

export interface LineRange {
  fd: number;
  start: number;
  end: number;
}

/** A rotation's move: never whole in memory. */
export function appendRange(path: string, range: LineRange, opts: AppendOptions): void {
  appendUnderLock(path, opts, (fd, { endsWithNewline }) => {
    if (range.end <= range.start) return;
    opts.deadline.check('recording the change');
    if (!endsWithNewline) writeAll(fd, Buffer.from('\n'));
    copyRange(range, fd);
  });
}

function appendUnderLock(
  path: string,
  { deadline, within }: AppendOptions,
  write: (fd: number, tail: { lastLine: string | undefined; endsWithNewline: boolean }) => void,
): void {
  mkdirNoFollow(within, dirname(path));
  const lock = acquireLock(path, deadline);
  try {
    let fd: number;
    try {
      fd = openSync(path, APPEND_FLAGS, 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CairnError(
        'store',
        `cannot append to ${path}: ${code === 'ELOOP' ? 'it is a symbolic link; cairn never writes through one' : (err as Error).message}`,
      );
    }
    try {
      write(fd, readTail(fd));
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

const PIECE = 1 << 20;

export function copyRange({ fd, start, end }: LineRange, to: number): void {
  const buf = Buffer.allocUnsafe(Math.min(PIECE, Math.max(1, end - start)));
  for (let pos = start; pos < end; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
    if (n === 0) throw new CairnError('store', 'a file shrank while it was copied');
    writeAll(to, buf.subarray(0, n));
    pos += n;
  }
}

export function sameBytes(fdA: number, a: number, fdB: number, b: number, length: number): boolean {
  const size = Math.min(PIECE, Math.max(1, length));
  const [x, y] = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
  for (let done = 0; done < length; ) {
    const want = Math.min(size, length - done);
    const n = readSync(fdA, x, 0, want, a + done);
    const m = readSync(fdB, y, 0, want, b + done);
    if (n !== want || m !== want || !x.subarray(0, n).equals(y.subarray(0, m))) return false;
    done += want;
  }
  return true;
}

/** With `keep`, also where each of the last `keep` lines ends. */
export function countLines(fd: number, start: number, end: number, keep = 0): { lines: number; lastEnds: number[] } {
  const buf = Buffer.allocUnsafe(Math.min(PIECE, Math.max(1, end - start)));
  const ring = new Array<number>(keep); // the last `keep` line ends, the oldest at lines % keep
  let lines = 0;
  for (let pos = start; pos < end; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
    if (n === 0) break;
    for (let nl = buf.indexOf(0x0a); nl >= 0 && nl < n; nl = buf.indexOf(0x0a, nl + 1)) {
      if (keep > 0) ring[lines % keep] = pos + nl + 1;
      lines++;
    }
    pos += n;
  }
  const held = Math.min(lines, keep);
  return { lines, lastEnds: Array.from({ length: held }, (_, i) => ring[(lines - held + i) % keep]) };
}

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
  offset: number;
  end: number;
  text: string;
}

/** A last line without its newline is torn or still being written: skipped. */
export function* readLines(path: string, from = 0, chunkSize = 1 << 20): Generator<LogLine> {
  const fd = openLog(path);
  if (fd === undefined) return;
  try {
    let buf = Buffer.allocUnsafe(chunkSize);
    let held = 0; // bytes of an unfinished line at the start of buf
    let pos = from; // file offset just past what buf holds
    for (;;) {
      if (held === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, held);
        buf = bigger;
      }
      const n = readSync(fd, buf, held, buf.length - held, pos);
      if (n === 0) break;
      pos += n;
      const end = held + n;
      const base = pos - end; // file offset of buf[0]
      let start = 0;
      for (let nl = buf.indexOf(0x0a, held); nl >= 0 && nl < end; nl = buf.indexOf(0x0a, nl + 1)) {
        yield { offset: base + start, end: base + nl + 1, text: buf.toString('utf8', start, nl) };
        start = nl + 1;
      }
      held = end - start;
      buf.copy(buf, 0, start, end);
    }
  } finally {
    closeSync(fd);
  }
}

export function readBytes(path: string, position: number, length: number): Buffer {
  const fd = openLog(path);
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
