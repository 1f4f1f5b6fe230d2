import { closeSync, constants, ftruncateSync, openSync, readFileSync, readSync, fstatSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { appendRange, copyRange, countLines, sameBytes, type LineRange } from '../io/jsonl.js';
import { acquireLock } from '../io/lock.js';
import { writeFileAtomic } from '../io/atomic.js';
import { openLog } from '../io/read.js';
import { CairnError } from '../core/errors.js';
import type { Deadline } from '../core/deadline.js';

// Rotation (SPEC §4.5): past 5000 lines the oldest move to the archive, leaving 2500. Journalled, under the lock: (1) journal
// the lines, the log's inode and the archive's size, (2) append to the archive, (3) rewrite the log, (4) drop the journal.
// Finishing a killed move: (2) skipped if the archive ends with the lines, else cut back first; (3) skipped once the inode changed.

export const ROTATE_ABOVE = 5000;
export const KEEP_NEWEST = 2500;

export interface RotateOptions {
  deadline: Deadline;
  within: string;
  above?: number;
  keep?: number;
  countFile?: string;
}

export interface RotateReport {
  moved: number;
  kept: number;
  recovered: number;
}

export function journalPath(logPath: string): string {
  return `${logPath}.rotating.tmp`;
}

// no entry's line is shorter: N bytes grown since the count hold at most N / SMALLEST_LINE lines
const SMALLEST_LINE = 40;

interface LineCount {
  size: number;
  lines: number;
}

/** Always finishes a cut-short rotation; when not due, a stat and the remembered count. */
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
    // + 1: a line torn at the last count may be complete now
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

/** Best effort. */
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
  if (!exists(logPath) && !exists(journalPath(logPath))) return { moved: 0, kept: 0, recovered: 0 };
  const lock = acquireLock(logPath, opts.deadline);
  try {
    const recovered = finishJournal(logPath, archivePath, opts);
    // never a FIFO, device or link; a piece at a time, at any size
    const fd = openLog(logPath);
    if (fd === undefined) return { moved: 0, kept: 0, recovered };
    try {
      const { ino: inode, size } = fstatSync(fd); // under the lock: nothing appended meanwhile
      const { lines, lastEnds } = countLines(fd, 0, size, keep + 1);
      if (lines <= above) {
        rememberLineCount(logPath, lines, opts);
        return { moved: 0, kept: lines, recovered };
      }
      const cut = lastEnds[0]; // just past the last line that moves
      const header = Buffer.from(`${JSON.stringify({ inode, archiveSize: sizeOf(archivePath) })}\n`);
      writeFileAtomic(
        journalPath(logPath),
        (out) => {
          writeSync(out, header);
          copyRange({ fd, start: 0, end: cut }, out);
        },
        opts.within,
      );
      appendRange(archivePath, { fd, start: 0, end: cut }, opts);
      // a torn last line stays with the log
      writeFileAtomic(logPath, (out) => copyRange({ fd, start: cut, end: size }, out), opts.within);
      unlinkSync(journalPath(logPath));
      rememberLineCount(logPath, keep, opts);
      return { moved: lines - keep, kept: keep, recovered };
    } finally {
      closeSync(fd);
    }
  } finally {
    lock.release();
  }
}

function finishJournal(logPath: string, archivePath: string, opts: RotateOptions): number {
  // never through a link: one planted at the journal's place would move its target into the archive
  const journal = openLog(journalPath(logPath));
  if (journal === undefined) return 0;
  try {
    const size = fstatSync(journal).size;
    const head = Buffer.alloc(Math.min(size, 4096));
    readSync(journal, head, 0, head.length, 0);
    const headerEnd = head.indexOf(0x0a);
    if (headerEnd < 0) throw new CairnError('store', `${journalPath(logPath)} is not a rotation journal; left as it is`);
    const { inode, archiveSize } = JSON.parse(head.toString('utf8', 0, headerEnd)) as {
      inode: number;
      archiveSize?: number;
    };
    const moved = { fd: journal, start: headerEnd + 1, end: size };
    const length = moved.end - moved.start;
    if (!endsWith(archivePath, moved)) {
      if (archiveSize !== undefined) cutPartialAppend(archivePath, archiveSize, moved);
      appendRange(archivePath, moved, opts);
    }
    const log = exists(logPath) ? openLog(logPath) : undefined;
    if (log !== undefined) {
      try {
        const { ino, size: logSize } = fstatSync(log);
        if (ino === inode && logSize >= length && sameBytes(log, 0, journal, moved.start, length)) {
          writeFileAtomic(logPath, (out) => copyRange({ fd: log, start: length, end: logSize }, out), opts.within);
        }
      } finally {
        closeSync(log);
      }
    }
    unlinkSync(journalPath(logPath));
    return countLines(journal, moved.start, moved.end).lines;
  } finally {
    closeSync(journal);
  }
}

/** An append killed part-way: its partial lines cut off, so appending again doubles none. */
function cutPartialAppend(archivePath: string, size: number, lines: LineRange): void {
  let fd: number;
  try {
    fd = openSync(archivePath, constants.O_RDWR | constants.O_NOFOLLOW);
  } catch {
    return; // missing (nothing appended), or a link (the append refuses it)
  }
  try {
    const now = fstatSync(fd).size;
    const length = lines.end - lines.start;
    if (now <= size || now - size > length + 1) return;
    const tail = now - size;
    const prefixOfLines = (at: number, n: number) => sameBytes(fd, at, lines.fd, lines.start, n);
    const first = Buffer.alloc(1);
    readSync(fd, first, 0, 1, size);
    if (prefixOfLines(size, tail) || (first[0] === 0x0a && prefixOfLines(size + 1, tail - 1))) ftruncateSync(fd, size);
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

function endsWith(path: string, bytes: LineRange): boolean {
  const length = bytes.end - bytes.start;
  const fd = exists(path) ? openLog(path) : undefined;
  if (fd === undefined) return length === 0;
  try {
    const size = fstatSync(fd).size;
    return size >= length && sameBytes(fd, size - length, bytes.fd, bytes.start, length);
  } finally {
    closeSync(fd);
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
