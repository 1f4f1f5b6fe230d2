import { parseJsonLine } from '../io/jsonl.js';
import { applyEvent } from './reducer.js';
import { envelopeProblem, eventKey, payloadProblem, type CairnEvent, type EventPayload } from './types.js';
import { nextUlid } from '../core/ids.js';
import { nowMs } from '../core/clock.js';
import { describeError, IndexCatchingUp } from '../core/errors.js';
import { deferredCount } from '../store/deferred.js';
import { EVENT_LOG_INDEXES, EVENT_LOG_TABLES, type Database } from '../store/db.js';
import type { Store } from '../store/store.js';
import { startJob } from '../store/background.js';
import { join } from 'node:path';
import type { FollowReport, LogFollower } from '../store/follower.js';
import type { Progress } from '../core/progress.js';

// events.jsonl (SPEC §3.2): appended in (ts, id) order under the lock, replayed by the one reducer in that order.

/** Above this many term rows a hook lacks the time to build the indexes: the `finish-index` job does. */
const INLINE_FINISH_TERMS = 100_000;
const FINISH_RETRY_MS = 60_000;
/** KiB, never in a hook: pattern rows keyed by a hash update random pages. */
const REPLAY_CACHE_KB = 100_000;
/** SQLite's default: the index builds are faster with it. */
const DEFAULT_CACHE_KB = 2_000;

export function eventFollower(store: Store): LogFollower<CairnEvent> {
  return {
    name: 'events',
    path: store.eventsPath,
    parse: parseEvent,
    apply: (db, event) => applyEvent(db, event),
    reset: (db) => {
      for (const name of Object.keys(EVENT_LOG_INDEXES)) db.exec(`DROP INDEX IF EXISTS ${name}`);
      for (const table of EVENT_LOG_TABLES) db.exec(`DELETE FROM ${table}`);
      // packed lists, a cache of pattern_terms
      db.exec('DELETE FROM pattern_postings');
    },
    finish: (db) => {
      // one sorter helper thread: a large cache sorts in one run and leaves it idle, so the default cache is faster
      db.pragma('threads = 1');
      db.pragma(`cache_size = -${DEFAULT_CACHE_KB}`);
      for (const create of Object.values(EVENT_LOG_INDEXES))
        db.exec(create.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '));
    },
    finishLater: (db) => {
      if (termRows(db) < INLINE_FINISH_TERMS) return false;
      startJob(store, 'finish-index', { path: finishStamp(store), everyMs: FINISH_RETRY_MS });
      return true;
    },
    orderKey: eventKey,
  };
}

const termRows = (db: Database) => (db.prepare('SELECT MAX(rowid) AS n FROM pattern_terms').get() as { n: number | null }).n ?? 0;
const finishStamp = (store: Store) => join(store.dir, 'cache', 'index.requested');

/** After `cairn rebuild`: false when the caller can pack the posting lists now. */
export function packLater(store: Store): boolean {
  if (termRows(patternDb(store)) < INLINE_FINISH_TERMS) return false;
  startJob(store, 'pack-postings', { path: finishStamp(store), everyMs: 0 });
  return true;
}

const inOrder = new WeakSet<Store>();

/** Up to date with events.jsonl; an in-order writer waits behind runs kept before it. */
export function patternDb(store: Store): Database {
  if (store.writesInOrder && !inOrder.has(store)) {
    inOrder.add(store);
    const waiting = deferredCount(store.dir);
    if (waiting) throw new IndexCatchingUp('store', `${waiting} earlier run(s) kept for later are not applied yet`);
  }
  return store.indexed(eventFollower(store));
}

/** `cairn rebuild --continue`: the job a long finish is handed to, so it builds under its own deadline. */
export function continuePatterns(store: Store, progress?: Progress): FollowReport {
  store.database.pragma(`cache_size = -${REPLAY_CACHE_KB}`);
  const { finishLater: _handedToThisJob, ...follower } = eventFollower(store);
  return store.refresh(follower, progress);
}

export function rebuildPatterns(store: Store, progress?: Progress): FollowReport {
  store.database.pragma(`cache_size = -${REPLAY_CACHE_KB}`);
  return store.rebuildIndex(eventFollower(store), progress);
}

/** The append is the commit point (SPEC §2): failing to index is a warning, never an error a caller would retry. */
export function appendEvents(store: Store, payloads: EventPayload[]): CairnEvent[] {
  if (payloads.length === 0) return [];
  const follower = eventFollower(store);
  store.indexed(follower); // the writer decides on current state
  const events = appendEventLines(store, payloads);
  try {
    store.refresh(follower);
  } catch (err) {
    store.log.warn(`recorded ${events.length} event(s); indexing them is left to the next run (${describeError(err)})`);
  }
  return events;
}

/** Ids strictly after the log's last one, so file order is replay order. */
export function appendEventLines(store: Store, payloads: EventPayload[]): CairnEvent[] {
  const written: CairnEvent[] = [];
  const project = store.project;
  store.appendLines(store.eventsPath, (lastLine) => {
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
  });
  return written;
}

function parseEvent(text: string, offset: number, warn: (m: string) => void): CairnEvent | undefined {
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
