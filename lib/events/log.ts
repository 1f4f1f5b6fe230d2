import { statSync } from 'node:fs';
import { appendLines, parseJsonLine, readBytes, readLines } from '../io/jsonl.js';
import { applyEvent } from './reducer.js';
import { envelopeProblem, eventKey, payloadProblem, type CairnEvent, type EventPayload } from './types.js';
import { nextUlid } from '../core/ids.js';
import { nowMs } from '../core/clock.js';
import { sha256 } from '../core/text.js';
import { DERIVED_TABLES, type Database } from '../store/db.js';
import type { Deadline } from '../core/deadline.js';

// events.jsonl is the truth; SQLite records how far into it it has applied: the byte offset, a
// hash of the first and of the last WINDOW bytes of that prefix, and the last applied (ts, id).
// A grown log applies its tail; a changed prefix (a merge, a rotation) or a tail that sorts
// before what was applied triggers a full, ordered replay.

const WINDOW = 4096;
const META_KEY = 'log:events';

interface LogMark {
  offset: number;
  head: string;
  tail: string;
  last: string;
  size: number;
  mtimeMs: number;
}

const EMPTY_MARK: LogMark = { offset: 0, head: '', tail: '', last: '', size: 0, mtimeMs: 0 };

export interface SyncReport {
  applied: number;
  skipped: number;
  rebuilt: boolean;
}

export interface SyncOptions {
  deadline: Deadline;
  warn: (message: string) => void;
}

/** Append events with ids strictly after the log's last one, so file order is replay order. */
export function appendEvents(path: string, project: string, payloads: EventPayload[], deadline: Deadline): CairnEvent[] {
  const written: CairnEvent[] = [];
  appendLines(
    path,
    (lastLine) => {
      const last = lastLine ? parseJsonLine<{ id?: unknown; ts?: unknown }>(lastLine) : undefined;
      let after = last?.ok && typeof last.value.id === 'string' ? last.value.id : undefined;
      const lastTs = last?.ok ? Date.parse(String(last.value.ts)) : NaN;
      const ts = Number.isFinite(lastTs) ? Math.max(nowMs(), lastTs) : nowMs(); // never sort before the log's tail
      return payloads.map((payload) => {
        const id = nextUlid(ts, after);
        after = id;
        const event = { v: 1, id, ts: new Date(ts).toISOString(), project, ...payload } as CairnEvent;
        written.push(event);
        return JSON.stringify(event);
      });
    },
    deadline,
  );
  return written;
}

function readMark(db: Database): LogMark {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(META_KEY) as { value: string } | undefined;
  return row ? { ...EMPTY_MARK, ...JSON.parse(row.value) } : EMPTY_MARK;
}

function writeMark(db: Database, mark: LogMark): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
    META_KEY,
    JSON.stringify(mark),
  );
}

function windowHashes(path: string, offset: number): { head: string; tail: string } {
  if (offset === 0) return { head: '', tail: '' };
  const headLen = Math.min(offset, WINDOW);
  const tailStart = Math.max(0, offset - WINDOW);
  return { head: sha256(readBytes(path, 0, headLen)), tail: sha256(readBytes(path, tailStart, offset - tailStart)) };
}

function statLog(path: string): { size: number; mtimeMs: number } | undefined {
  try {
    const st = statSync(path);
    return { size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

/** Bring the database up to date with the log. Cheap when nothing changed: one stat, one row. */
export function syncEvents(db: Database, path: string, opts: SyncOptions): SyncReport {
  const before = readMark(db);
  const st = statLog(path);
  if (st && st.size === before.size && st.mtimeMs === before.mtimeMs && before.offset <= st.size) {
    return { applied: 0, skipped: 0, rebuilt: false };
  }
  if (!st && before.offset === 0) return { applied: 0, skipped: 0, rebuilt: false };
  const outcome = db.transaction((): SyncReport | 'rebuild' => {
    const mark = readMark(db); // re-read under the write lock: another process may have applied
    const now = statLog(path);
    if (!now) return mark.offset === 0 ? { applied: 0, skipped: 0, rebuilt: false } : 'rebuild';
    if (now.size < mark.offset) return 'rebuild';
    const { head, tail } = windowHashes(path, mark.offset);
    if (head !== mark.head || tail !== mark.tail) return 'rebuild';
    let applied = 0;
    let skipped = 0;
    let offset = mark.offset;
    let last = mark.last;
    for (const line of readLines(path, mark.offset)) {
      offset = line.end;
      const event = parseEvent(line.text, line.offset, opts.warn);
      if (!event) {
        if (line.text.trim()) skipped++;
        continue;
      }
      const key = eventKey(event);
      if (key <= last) return 'rebuild'; // a merged or foreign line sorts before what was applied
      applyEvent(db, event);
      last = key;
      if (++applied % 1000 === 0) opts.deadline.check('applying the event log');
    }
    writeMark(db, { offset, ...windowHashes(path, offset), last, size: now.size, mtimeMs: now.mtimeMs });
    return { applied, skipped, rebuilt: false };
  }).immediate();
  return outcome === 'rebuild' ? rebuildFromLog(db, path, opts) : outcome;
}

/** Replay the whole log, ordered by (ts, id), into empty derived tables, in one transaction. */
export function rebuildFromLog(db: Database, path: string, opts: SyncOptions): SyncReport {
  return db.transaction((): SyncReport => {
    for (const table of DERIVED_TABLES) db.exec(`DELETE FROM ${table}`);
    // Stat before reading: a line appended meanwhile then leaves the mark's size behind the file's,
    // so the next sync applies it (a stat taken after would make the next sync skip it).
    const st = statLog(path) ?? { size: 0, mtimeMs: 0 };
    const events: CairnEvent[] = [];
    let skipped = 0;
    let offset = 0;
    for (const line of readLines(path, 0)) {
      offset = line.end;
      const event = parseEvent(line.text, line.offset, opts.warn);
      if (event) events.push(event);
      else if (line.text.trim()) skipped++;
      if (events.length % 10_000 === 0) opts.deadline.check('reading the event log');
    }
    const keyed = events.map((e) => ({ key: eventKey(e), e }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    let last = '';
    let applied = 0;
    keyed.forEach(({ key, e }, i) => {
      if (key === last) return; // the same event twice (a union merge that kept both copies)
      applyEvent(db, e);
      last = key;
      applied++;
      if (i % 5000 === 4999) opts.deadline.check('replaying the event log');
    });
    writeMark(db, { offset, ...windowHashes(path, offset), last, size: st.size, mtimeMs: st.mtimeMs });
    return { applied, skipped, rebuilt: true };
  }).immediate();
}

function parseEvent(text: string, offset: number, warn: (m: string) => void): CairnEvent | undefined {
  if (!text.trim()) return undefined;
  const parsed = parseJsonLine(text);
  if (!parsed.ok) {
    warn(`events.jsonl: skipped the line at byte ${offset}: ${parsed.reason}`);
    return undefined;
  }
  const problem = envelopeProblem(parsed.value) ?? payloadProblem(parsed.value);
  if (problem) {
    warn(`events.jsonl: skipped the line at byte ${offset}: ${problem}`);
    return undefined;
  }
  return parsed.value as unknown as CairnEvent;
}
