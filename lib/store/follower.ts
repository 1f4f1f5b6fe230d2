import { statSync } from 'node:fs';
import { randomBytes } from '../core/crypto.js';
import { readBytes, readLines } from '../io/jsonl.js';
import { sha256 } from '../core/text.js';
import { CairnError, IndexCatchingUp } from '../core/errors.js';
import type { Deadline } from '../core/deadline.js';
import type { Progress } from '../core/progress.js';
import type { Database } from './db.js';

// The one log→index follower (SPEC §3.2, §4.3; docs/internals.md, "The store and the follower").

export interface LogFollower<T> {
  name: string;
  path: string;
  parse(text: string, offset: number, warn: (message: string) => void): T | undefined;
  apply(db: Database, item: T, offset: number): void;
  reset(db: Database): void;
  /** Build what reset set aside, in its own transaction. */
  finish?(db: Database): void;
  /** Under a deadline: true when `finish` was started elsewhere, taking longer than a hook has. */
  finishLater?(db: Database): boolean;
  /** The event log: (ts, id); absent: file order. */
  orderKey?(item: T): string;
}

export interface FollowReport {
  applied: number;
  skipped: number;
  rebuilt: boolean;
}

export interface FollowOptions {
  deadline: Deadline;
  warn: (message: string) => void;
  sliceMs?: number;
  progress?: Progress;
}

const WINDOW = 4096;
// long enough to amortise a commit's page writes, short enough that a cut-short run loses little
const SLICE_MS = 400;

interface Mark {
  offset: number;
  head: string;
  tail: string;
  last: string;
  /** An unchanged log costs one stat. */
  size: number;
  mtimeMs: number;
  /** A later process resumes it only while its basis prefix is unchanged. */
  rebuild?: { epoch: string; through: string; basis: { offset: number; head: string; tail: string } };
  /** A first build in file order: what `finish` builds is set aside until the end. */
  building?: true;
}

const EMPTY: Mark = { offset: 0, head: '', tail: '', last: '', size: 0, mtimeMs: 0 };

const metaKey = (f: LogFollower<unknown>) => `log:${f.name}`;

function readMark(db: Database, f: LogFollower<unknown>): Mark {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(metaKey(f)) as { value: string } | undefined;
  return row ? { ...EMPTY, ...JSON.parse(row.value) } : EMPTY;
}

function writeMark(db: Database, f: LogFollower<unknown>, mark: Mark): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
    metaKey(f),
    JSON.stringify(mark),
  );
}

function statLog(path: string): { size: number; mtimeMs: number } | undefined {
  try {
    const st = statSync(path);
    return { size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

export function windowHashes(path: string, offset: number): { head: string; tail: string } {
  if (offset === 0) return { head: '', tail: '' };
  const tailStart = Math.max(0, offset - WINDOW);
  return {
    head: sha256(readBytes(path, 0, Math.min(offset, WINDOW))),
    tail: sha256(readBytes(path, tailStart, offset - tailStart)),
  };
}

function markAt(path: string, offset: number, last: string, seen: { size: number; mtimeMs: number }): Mark {
  return { offset, ...windowHashes(path, offset), last, size: seen.size, mtimeMs: seen.mtimeMs };
}

export function prefixIntact(path: string, mark: Pick<Mark, 'offset' | 'head' | 'tail'>, size: number): boolean {
  if (size < mark.offset) return false;
  const { head, tail } = windowHashes(path, mark.offset);
  return head === mark.head && tail === mark.tail;
}

function deadlineError(f: LogFollower<unknown>, done: number, of: number): CairnError {
  return new IndexCatchingUp(
    'deadline',
    `deadline passed while indexing ${f.name} (${done} of ${of} bytes applied; the next run continues)`,
  );
}

export function followerStatus(
  db: Database,
  f: LogFollower<unknown>,
): { appliedBytes: number; logBytes: number; inSync: boolean; rebuilding: boolean } {
  const mark = readMark(db, f);
  const st = statLog(f.path);
  const logBytes = st?.size ?? 0;
  const inSync = !mark.rebuild && !mark.building && mark.offset === logBytes && (logBytes === 0 || prefixIntact(f.path, mark, logBytes));
  return { appliedBytes: mark.offset, logBytes, inSync, rebuilding: Boolean(mark.rebuild || mark.building) };
}

/** One stat and one row when nothing changed. */
export function follow<T>(db: Database, f: LogFollower<T>, opts: FollowOptions): FollowReport {
  const mark = readMark(db, f);
  const st = statLog(f.path);
  if (!mark.rebuild && st && st.size === mark.size && st.mtimeMs === mark.mtimeMs && mark.offset <= st.size) {
    if (mark.building) completeBuild(db, f, opts); // every line applied; what finish builds may not be
    return { applied: 0, skipped: 0, rebuilt: false };
  }
  if (!st && mark.offset === 0 && !mark.rebuild) return { applied: 0, skipped: 0, rebuilt: false };
  if (mark.rebuild) return orderedRebuild(db, f, opts, false);
  // a first build in file order, readers' indexes set aside until finish
  if (f.finish && mark.offset === 0 && st && st.size > 0) {
    db.transaction(() => {
      const now = readMark(db, f);
      if (now.offset !== 0 || now.rebuild) return; // another process started it
      f.reset(db);
      writeMark(db, f, { ...EMPTY, building: true });
    }).immediate();
  }
  return applyTail(db, f, opts, false);
}

export function rebuildIndex<T>(db: Database, f: LogFollower<T>, opts: FollowOptions): FollowReport {
  if (f.orderKey) return orderedRebuild(db, f, opts, true);
  db.transaction(() => {
    f.reset(db);
    writeMark(db, f, EMPTY);
  }).immediate();
  return { ...applyTail(db, f, opts, true), rebuilt: true };
}

/** Each slice re-reads the mark under the write lock: concurrent followers never apply a line twice. */
function applyTail<T>(db: Database, f: LogFollower<T>, opts: FollowOptions, rebuilt: boolean): FollowReport {
  const report: FollowReport = { applied: 0, skipped: 0, rebuilt };
  const sliceMs = opts.sliceMs ?? SLICE_MS;
  for (;;) {
    let step: 'done' | 'more' | 'rebuild';
    try {
      step = db
        .transaction((): 'done' | 'more' => {
          const mark = readMark(db, f);
          const seen = statLog(f.path);
          if (!seen) {
            if (mark.offset === 0) return 'done';
            throw NEEDS_REBUILD;
          }
          if (mark.rebuild || !prefixIntact(f.path, mark, seen.size)) throw NEEDS_REBUILD;
          const until = Date.now() + sliceMs;
          let offset = mark.offset;
          let last = mark.last;
          let count = 0;
          for (const line of readLines(f.path, mark.offset)) {
            const item = line.text.trim() ? f.parse(line.text, line.offset, opts.warn) : undefined;
            if (item === undefined) {
              if (line.text.trim()) report.skipped++;
            } else {
              if (f.orderKey) {
                const key = f.orderKey(item);
                if (key <= last) throw NEEDS_REBUILD; // a merged or foreign line sorts before what was applied
                last = key;
              }
              f.apply(db, item, line.offset);
              report.applied++;
            }
            offset = line.end;
            if (++count % 64 === 0) opts.progress?.(offset, seen.size);
            if (count % 64 === 0 && (Date.now() >= until || opts.deadline.passed())) {
              writeMark(db, f, {
                ...markAt(f.path, offset, last, { size: -1, mtimeMs: -1 }),
                ...(mark.building ? { building: true as const } : {}),
              });
              return 'more';
            }
          }
          writeMark(db, f, {
            ...markAt(f.path, offset, last, seen),
            ...(mark.building ? { building: true as const } : {}),
          });
          return 'done';
        })
        .immediate();
    } catch (err) {
      if (err !== NEEDS_REBUILD) throw err;
      step = 'rebuild'; // the slice was rolled back
    }
    if (step === 'done') {
      completeBuild(db, f, opts);
      return report;
    }
    if (step === 'rebuild') {
      if (readMark(db, f).rebuild) return orderedRebuild(db, f, opts, false); // another process started one
      if (rebuilt) throw new CairnError('store', `${f.path} changed while it was being replayed; run again`);
      return rebuildIndex(db, f, opts);
    }
    if (opts.deadline.passed()) throw deadlineError(f, readMark(db, f).offset, statLog(f.path)?.size ?? 0);
  }
}

const NEEDS_REBUILD = Symbol('needs rebuild');

/** Unless sent to the background, or under half the deadline is left (the next run has all its own). */
function completeBuild<T>(db: Database, f: LogFollower<T>, opts: FollowOptions): void {
  if (!readMark(db, f).building) return;
  const d = opts.deadline;
  if (Number.isFinite(d.at) && f.finishLater?.(db)) return;
  if (d.passed())
    throw new IndexCatchingUp(
      'deadline',
      `deadline of ${d.ms} ms passed during indexing ${f.name} (replayed; its indexes are built by the next run)`,
    );
  if (Number.isFinite(d.at) && d.remaining() < d.ms / 2) {
    throw new IndexCatchingUp('deadline', `deadline of ${d.ms} ms near after replaying ${f.name}; its indexes are built by the next run`);
  }
  db.transaction(() => {
    const mark = readMark(db, f);
    if (!mark.building) return; // another process built them
    f.finish?.(db);
    const { building: _done, ...built } = mark;
    writeMark(db, f, built);
  }).immediate();
}

interface Keyed<T> {
  key: string;
  item: T;
  offset: number;
}

/** Each key once: a union merge may keep two copies. */
function readSorted<T>(f: LogFollower<T>, opts: FollowOptions): { items: Keyed<T>[]; end: number; skipped: number } {
  const items: Keyed<T>[] = [];
  let end = 0;
  let skipped = 0;
  for (const line of readLines(f.path, 0)) {
    end = line.end;
    const item = line.text.trim() ? f.parse(line.text, line.offset, opts.warn) : undefined;
    if (item === undefined) {
      if (line.text.trim()) skipped++;
    } else items.push({ key: f.orderKey!(item), item, offset: line.offset });
    if (items.length % 8192 === 0 && opts.deadline.passed()) throw deadlineError(f, 0, statLog(f.path)?.size ?? 0);
  }
  items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const unique = items.filter((x, i) => i === 0 || x.key !== items[i - 1].key);
  return { items: unique, end, skipped };
}

/** Stat before reading: a line appended meanwhile is left to the next follow. */
function orderedRebuild<T>(db: Database, f: LogFollower<T>, opts: FollowOptions, fresh: boolean): FollowReport {
  const seen = statLog(f.path) ?? { size: 0, mtimeMs: 0 };
  const { items, end, skipped } = readSorted(f, opts);
  let epoch: string;
  if (fresh) {
    epoch = randomBytes(6).toString('hex');
    const basis = { offset: end, ...windowHashes(f.path, end) };
    db.transaction(() => {
      f.reset(db);
      writeMark(db, f, { ...EMPTY, rebuild: { epoch, through: '', basis } });
    }).immediate();
  } else {
    const mark = readMark(db, f);
    if (!mark.rebuild) return { applied: 0, skipped, rebuilt: true }; // another process finished it
    const { basis, through } = mark.rebuild;
    const grownOnly =
      prefixIntact(f.path, { ...EMPTY, ...basis }, seen.size) && items.every((x) => x.offset < basis.offset || x.key > through);
    if (!grownOnly) return orderedRebuild(db, f, opts, true);
    epoch = mark.rebuild.epoch;
  }
  const sliceMs = opts.sliceMs ?? SLICE_MS;
  let applied = 0;
  for (;;) {
    const step = db
      .transaction((): 'done' | 'more' | 'restart' => {
        const mark = readMark(db, f);
        if (!mark.rebuild) return 'done'; // another process finished it
        if (mark.rebuild.epoch !== epoch) return 'restart';
        const until = Date.now() + sliceMs;
        let last = mark.rebuild.through;
        for (let i = lowerBound(items, last); i < items.length; i++) {
          f.apply(db, items[i].item, items[i].offset);
          last = items[i].key;
          applied++;
          if (applied % 64 === 0) opts.progress?.(i + 1, items.length);
          if (applied % 64 === 0 && (Date.now() >= until || opts.deadline.passed())) {
            writeMark(db, f, { ...mark, rebuild: { ...mark.rebuild, through: last } });
            return 'more';
          }
        }
        writeMark(db, f, { ...markAt(f.path, end, last, seen), ...(f.finish ? { building: true as const } : {}) });
        return 'done';
      })
      .immediate();
    if (step === 'done') {
      completeBuild(db, f, opts);
      return { applied, skipped, rebuilt: true };
    }
    if (opts.deadline.passed()) throw deadlineError(f, 0, seen.size);
    if (step === 'restart') return orderedRebuild(db, f, opts, false);
  }
}

function lowerBound<T>(items: Keyed<T>[], key: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].key <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
