import { basename, join, relative } from 'node:path';
import { closeSync, readFileSync } from 'node:fs';
import { redactSecrets, redactStrings } from '../core/secrets.js';
import { CairnError } from '../core/errors.js';
import type { Deadline } from '../core/deadline.js';
import { acquireLock } from '../io/lock.js';
import { writeFileAtomic } from '../io/atomic.js';
import { openRegularFile } from '../io/read.js';
import { readLines } from '../io/jsonl.js';
import type { Check } from './health.js';
import type { Store } from './store.js';

// `cairn scrub` (SPEC §4.6): the one sanctioned rewrite of a log; a line's rewrite depends on it alone and ids stay,
// so scrubbed clones still merge and replay alike.

export interface ScrubTarget {
  path: string;
  /** JSON lines, or one JSON array (the landing library). */
  format: 'lines' | 'array';
}

export interface Scrubbed {
  file: string;
  lines: number;
}

export function committedLogs(store: Store, landings: { log: string; library: string }): ScrubTarget[] {
  return [
    { path: store.eventsPath, format: 'lines' },
    { path: store.knowledgePath, format: 'lines' },
    { path: store.archivePath, format: 'lines' },
    { path: landings.log, format: 'lines' },
    { path: landings.library, format: 'array' },
  ];
}

function scrubLine(line: string): string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return redactSecrets(line).text;
  }
  const scrubbed = redactStrings(value);
  return scrubbed === value ? line : JSON.stringify(scrubbed);
}

/** Without a lock: a count for doctor. */
export function countSecrets(target: ScrubTarget): number {
  if (target.format === 'array') return scrubArray(readArray(target.path)).changed;
  let count = 0;
  for (const line of readLines(target.path)) if (line.text.trim() && scrubLine(line.text) !== line.text) count++;
  return count;
}

export interface ScrubOptions {
  deadline: Deadline;
  /** Nothing outside it written, no link in it followed. */
  within: string;
  backupDir: string;
}

export function scrubFile(target: ScrubTarget, opts: ScrubOptions): number {
  const lock = acquireLock(target.path, opts.deadline);
  try {
    const original = readWhole(target.path);
    if (original === undefined) return 0;
    let changed: number;
    let text: string;
    if (target.format === 'array') {
      const scrubbed = scrubArray(parseArray(original, target.path));
      changed = scrubbed.changed;
      text = `${JSON.stringify(scrubbed.entries, null, 2)}\n`; // the library's own layout
    } else {
      // the last piece is '' after a final newline, or a torn line
      const lines = original.split('\n');
      const out = lines.map((line) => (line.trim() ? scrubLine(line) : line));
      changed = out.filter((line, i) => line !== lines[i]).length;
      text = out.join('\n');
    }
    if (changed === 0) return 0;
    opts.deadline.check('scrubbing the logs');
    writeFileAtomic(join(opts.backupDir, relative(opts.within, target.path)), original, opts.within);
    writeFileAtomic(target.path, text, opts.within);
    return changed;
  } finally {
    lock.release();
  }
}

export function backupDirFor(storeDir: string, now: number): string {
  return join(storeDir, 'cache', `scrub-backup-${new Date(now).toISOString().replace(/[-:]|\.\d+/g, '')}`);
}

export function secretsCheck(targets: ScrubTarget[], storeDir: string): Check {
  const found: Scrubbed[] = [];
  for (const target of targets) {
    try {
      const lines = countSecrets(target);
      if (lines > 0) found.push({ file: relative(storeDir, target.path), lines });
    } catch (err) {
      if (!(err instanceof CairnError)) throw err;
      // unreadable: another check's report
    }
  }
  const total = found.reduce((n, f) => n + f.lines, 0);
  if (total === 0) return { name: 'secrets', status: 'ok', detail: 'none in the committed logs' };
  const where = found.map((f) => `${f.file} ${f.lines}`).join(', ');
  return {
    name: 'secrets',
    status: 'fail',
    detail:
      `${total} line(s) of the committed logs hold secrets (${where}): run cairn scrub, rotate those credentials, ` +
      'and purge them from the git history (cairn scrub --help)',
  };
}

function scrubArray(entries: unknown[]): { entries: unknown[]; changed: number } {
  const out = entries.map(redactStrings);
  return { entries: out, changed: out.filter((e, i) => e !== entries[i]).length };
}

function readArray(path: string): unknown[] {
  const text = readWhole(path);
  return text === undefined ? [] : parseArray(text, path);
}

function parseArray(text: string, path: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CairnError('input', `${basename(path)} is not valid JSON; left as it is`);
  }
  if (!Array.isArray(value)) throw new CairnError('input', `${basename(path)} is not a JSON list; left as it is`);
  return value;
}

/** Never through a symbolic link; undefined when missing. */
function readWhole(path: string): string | undefined {
  const fd = openRegularFile(path, true);
  if (fd === undefined) return undefined;
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
