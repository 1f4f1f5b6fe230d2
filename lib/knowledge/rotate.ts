import { closeSync, openSync, readFileSync, readSync, fstatSync, statSync, unlinkSync } from 'node:fs';
import { appendLines } from '../io/jsonl.js';
import { acquireLock } from '../io/lock.js';
import { writeFileAtomic } from '../io/atomic.js';
import { openRegularFile } from '../io/read.js';
import { CairnError } from '../core/errors.js';
import type { Deadline } from '../core/deadline.js';

// Rotation (SPEC §4.5): when knowledge.jsonl holds more than 5000 lines, the oldest move to
// knowledge.archive.jsonl so that the newest 2500 stay. Two files change, so the move is journalled:
//   1. the lines to move are written to a journal beside the log (with the log's inode),
//   2. appended to the archive,
//   3. the log is rewritten without them (temp file + rename: a new inode),
//   4. the journal is removed.
// Killed at any point, the next rotation (or capture) finishes the move from the journal: step 2 is
// skipped if the archive already ends with the lines, step 3 if the log's inode has changed. So no
// entry is ever lost or doubled. All of it runs under the log's lock, so no capture appends meanwhile.

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

// A log of more than 5000 lines cannot be this small: skip the line count on the hot path.
const SMALLEST_LINE = 40;

/** Rotate if due (cheap when not: one stat); always finish a rotation that was cut short. */
export function rotateIfDue(logPath: string, archivePath: string, opts: RotateOptions): RotateReport | undefined {
  const above = opts.above ?? ROTATE_ABOVE;
  let size = 0;
  try {
    size = statSync(logPath).size;
  } catch {
    size = 0;
  }
  if (size <= above * SMALLEST_LINE && !exists(journalPath(logPath))) return undefined;
  return rotate(logPath, archivePath, opts);
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
    if (ends.length <= above) return { moved: 0, kept: ends.length, recovered };
    const cut = ends[ends.length - keep - 1]; // byte just past the last line that moves
    const moved = log.subarray(0, cut);
    writeFileAtomic(journalPath(logPath), Buffer.concat([Buffer.from(`${JSON.stringify({ inode })}\n`), moved]), opts.within);
    appendToArchive(archivePath, moved, opts);
    writeFileAtomic(logPath, log.subarray(cut), opts.within); // a torn last line stays with the log
    unlinkSync(journalPath(logPath));
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
  const { inode } = JSON.parse(journal.toString('utf8', 0, headerEnd)) as { inode: number };
  const moved = journal.subarray(headerEnd + 1);
  // compared as appended: the one JSONL writer takes text, so bytes that are not UTF-8 went in as U+FFFD
  if (!endsWith(archivePath, Buffer.from(moved.toString('utf8')))) appendToArchive(archivePath, moved, opts);
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
