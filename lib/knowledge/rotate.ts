import { closeSync, constants, ftruncateSync, openSync, readFileSync, readSync, fstatSync, statSync, unlinkSync } from 'node:fs';
import { appendLines } from '../io/jsonl.js';
import { acquireLock } from '../io/lock.js';
import { writeFileAtomic } from '../io/atomic.js';
import { openRegularFile } from '../io/read.js';
import { CairnError } from '../core/errors.js';
import type { Deadline } from '../core/deadline.js';

// Rotation (SPEC §4.5): when knowledge.jsonl holds more than 5000 lines, the oldest move to
// knowledge.archive.jsonl so that the newest 2500 stay. Two files change, so the move is journalled:
//   1. the lines to move are written to a journal beside the log (with the log's inode and the
//      archive's size),
//   2. appended to the archive,
//   3. the log is rewritten without them (temp file + rename: a new inode),
//   4. the journal is removed.
// Killed at any point, the next rotation (or capture) finishes the move from the journal: step 2 is
// skipped if the archive already ends with the lines, and an append cut short (the archive holds
// part of it) is cut off first; step 3 is skipped if the log's inode has changed. So no entry is ever
// lost or doubled. All of it runs under the log's lock, so no capture appends meanwhile.

export const ROTATE_ABOVE = 5000;
export const KEEP_NEWEST = 2500;

export interface RotateOptions {
  deadline: Deadline;
  /** The store directory: no symbolic link in it is written through (SPEC §2). */
  within: string;
  /** Rotate when the log has more complete lines than this (5000). */
  above?: number;
  /** Lines the log keeps (2500). */
  keep?: number;
  /**
   * Where the line count of the log's last reading is kept (in cache/): with it, rotateIfDue knows a
   * log that has grown by a few lines since is not due without reading it again.
   */
  countFile?: string;
}

export interface RotateReport {
  moved: number;
  kept: number;
  /** Lines a rotation cut short earlier had left half-moved, now finished. */
  recovered: number;
}

export function journalPath(logPath: string): string {
  return `${logPath}.rotating.tmp`;
}

// No line of an entry is shorter than this: a log this small cannot hold more than 5000 lines, and a
// log that grew by N bytes since it was counted gained at most N / SMALLEST_LINE lines.
const SMALLEST_LINE = 40;

/**
 * The log held `lines` complete lines when it was `size` bytes long. Appends and merges only add bytes,
 * each new line SMALLEST_LINE of them at least; a rotation shrinks it, and then it is counted again.
 */
interface LineCount {
  size: number;
  lines: number;
}

/**
 * Rotate if due, and always finish a rotation that was cut short. Cheap when not due: a stat, and —
 * for a log of some thousand lines, which a capture appends to every time — the count remembered
 * from the last reading instead of reading megabytes again.
 */
export function rotateIfDue(logPath: string, archivePath: string, opts: RotateOptions): RotateReport | undefined {
  const above = opts.above ?? ROTATE_ABOVE;
  if (!exists(journalPath(logPath))) {
    let size: number;
    try {
      size = statSync(logPath).size;
    } catch {
      return undefined;
    }
    if (size <= above * SMALLEST_LINE) return undefined;
    const last = opts.countFile ? readLineCount(opts.countFile) : undefined;
    // + 1: a line torn at the last count may have been completed since
    if (last && size >= last.size && last.lines + 1 + (size - last.size) / SMALLEST_LINE <= above) return undefined;
  }
  return rotate(logPath, archivePath, opts);
}

function readLineCount(path: string): LineCount | undefined {
  try {
    const c = JSON.parse(readFileSync(path, 'utf8')) as LineCount;
    return Number.isFinite(c.size) && Number.isFinite(c.lines) ? c : undefined;
  } catch {
    return undefined;
  }
}

/** Remember the count of the log as it now is; best effort (without it the next capture reads the log). */
function rememberLineCount(logPath: string, lines: number, opts: RotateOptions): void {
  if (!opts.countFile) return;
  try {
    writeFileAtomic(opts.countFile, JSON.stringify({ size: statSync(logPath).size, lines }) + '\n', opts.within);
  } catch {
    // the next rotateIfDue counts again
  }
}

export function rotate(logPath: string, archivePath: string, opts: RotateOptions): RotateReport {
  const above = opts.above ?? ROTATE_ABOVE;
  const keep = Math.min(opts.keep ?? KEEP_NEWEST, above);
  if (!exists(logPath) && !exists(journalPath(logPath))) return { moved: 0, kept: 0, recovered: 0 }; // nothing captured yet
  const lock = acquireLock(logPath, opts.deadline);
  try {
    const recovered = finishJournal(logPath, archivePath, opts);
    let log: Buffer;
    let inode: number;
    try {
      const fd = openRegularFile(logPath); // a regular file only: never a FIFO or device in its place
      if (fd === undefined) return { moved: 0, kept: 0, recovered };
      try {
        inode = fstatSync(fd).ino;
        log = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if (err instanceof CairnError) throw err;
      return { moved: 0, kept: 0, recovered };
    }
    const ends = lineEnds(log);
    if (ends.length <= above) {
      rememberLineCount(logPath, ends.length, opts); // under the lock: nothing was appended since the reading
      return { moved: 0, kept: ends.length, recovered };
    }
    const cut = ends[ends.length - keep - 1]; // byte just past the last line that moves
    const moved = log.subarray(0, cut);
    const header = { inode, archiveSize: sizeOf(archivePath) };
    writeFileAtomic(journalPath(logPath), Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), moved]), opts.within);
    appendToArchive(archivePath, moved, opts);
    writeFileAtomic(logPath, log.subarray(cut), opts.within); // a torn last line stays with the log
    unlinkSync(journalPath(logPath));
    rememberLineCount(logPath, keep, opts);
    return { moved: ends.length - keep, kept: keep, recovered };
  } finally {
    lock.release();
  }
}

/** Finish a rotation that was cut short (the caller holds the log's lock). Returns the lines it moved. */
function finishJournal(logPath: string, archivePath: string, opts: RotateOptions): number {
  let journal: Buffer;
  try {
    journal = readFileSync(journalPath(logPath));
  } catch {
    return 0;
  }
  // written whole (temp file + rename): a header line, then the lines being moved
  const headerEnd = journal.indexOf(0x0a);
  const { inode, archiveSize } = JSON.parse(journal.toString('utf8', 0, headerEnd)) as { inode: number; archiveSize?: number };
  const moved = journal.subarray(headerEnd + 1);
  // compared as appended: the one JSONL writer takes text, so bytes that are not UTF-8 went in as U+FFFD
  const appended = Buffer.from(moved.toString('utf8'));
  if (!endsWith(archivePath, appended)) {
    if (archiveSize !== undefined) cutPartialAppend(archivePath, archiveSize, appended);
    appendToArchive(archivePath, moved, opts);
  }
  let current: number | undefined;
  try {
    current = statSync(logPath).ino;
  } catch {
    current = undefined;
  }
  if (current === inode) {
    const log = readFileSync(logPath);
    if (log.subarray(0, moved.length).equals(moved)) writeFileAtomic(logPath, log.subarray(moved.length), opts.within);
  }
  unlinkSync(journalPath(logPath));
  return lineEnds(moved).length;
}

function appendToArchive(archivePath: string, lines: Buffer, opts: RotateOptions): void {
  const text = lines.toString('utf8').replace(/\n$/, '');
  if (text) appendLines(archivePath, () => text.split('\n'), opts);
}

/**
 * An append to the archive killed part-way left the archive as it was plus the start of the lines
 * (a newline first when it had none): cut that start off, so that appending them again doubles none.
 * Anything else after `size` (the archive changed in another way since) is left alone.
 */
function cutPartialAppend(archivePath: string, size: number, lines: Buffer): void {
  let fd: number;
  try {
    fd = openSync(archivePath, constants.O_RDWR | constants.O_NOFOLLOW);
  } catch {
    return; // missing (nothing was appended), or a link cairn never writes through (the append refuses it)
  }
  try {
    const now = fstatSync(fd).size;
    if (now <= size || now - size > lines.length + 1) return;
    const tail = Buffer.alloc(now - size);
    readSync(fd, tail, 0, tail.length, size);
    const start = tail[0] === 0x0a && !lines.subarray(0, tail.length).equals(tail) ? tail.subarray(1) : tail;
    if (lines.subarray(0, start.length).equals(start)) ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Does the file end with exactly these bytes? */
function endsWith(path: string, bytes: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return bytes.length === 0;
  }
  try {
    const size = fstatSync(fd).size;
    if (size < bytes.length) return false;
    const tail = Buffer.alloc(bytes.length);
    readSync(fd, tail, 0, bytes.length, size - bytes.length);
    return tail.equals(bytes);
  } finally {
    closeSync(fd);
  }
}

/** Offsets just past each complete line. */
function lineEnds(buf: Buffer): number[] {
  const ends: number[] = [];
  for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, nl + 1)) ends.push(nl + 1);
  return ends;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
