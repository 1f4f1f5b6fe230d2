import { shortHash, normaliseText } from '../core/text.js';
import type { Database } from '../store/db.js';
import type { LogFollower } from '../store/follower.js';
import type { Store } from '../store/store.js';
import { ftsMatch, ftsTerms } from '../store/fts.js';
import type { KnowledgeEntry } from './entry.js';
import { shownTags, shownType } from './render.js';
import { isCommandLike } from './noise.js';
import { parseEntryLine } from './reader.js';
import { ROTATE_ABOVE } from './rotate.js';

// The knowledge index (SPEC §4.3): FTS5 over the log, archive and active cache, fed by the one follower; only a
// version's latest line is visible (§4.5). Over 400 lines: the rows, their follower and the search share tables.

export type Source = 'archive' | 'log' | 'active';
const SOURCE_CODE: Record<Source, number> = { archive: 0, log: 1, active: 2 };
// versions compare within the raw logs (archive < log) and within the active cache, never across
const SEQ_BASE: Record<Source, number> = { archive: 0, log: 2 ** 40, active: 0 };

function knowledgeFollower(path: string, source: Source): LogFollower<KnowledgeEntry> {
  const code = SOURCE_CODE[source];
  return {
    name: `knowledge-${source}`,
    path,
    parse(text, offset, warn) {
      const parsed = parseEntryLine(text);
      if (parsed.ok) return parsed.value;
      warn(`${source === 'log' ? 'knowledge.jsonl' : `knowledge ${source}`}: skipped the line at byte ${offset}: ${parsed.reason}`);
      return undefined;
    },
    apply(db, e, offset) {
      // a planted tag that is not one word (`ok\n[LEARNED] …`) is dropped whole
      const tags = shownTags(e.tags).join(' ');
      const { lastInsertRowid } = statements(db).insert.run(
        code,
        SEQ_BASE[source] + offset,
        versionOf(e),
        e.project ?? '',
        e.key,
        e.type,
        e.content,
        tags,
        e.bead,
        e.ts,
        e.status ?? null,
        isCommandLike(e.content) ? 1 : 0,
      );
      if (source !== 'active') statements(db).insertFts.run(lastInsertRowid, e.content, tags, e.type, e.key);
    },
    reset(db) {
      forgetNewest(db, code, Infinity);
      if (source !== 'active') {
        db.prepare(
          `INSERT INTO knowledge_fts (knowledge_fts, rowid, content, tags, type, key)
           SELECT 'delete', id, content, tags, type, key FROM knowledge WHERE source = ?`,
        ).run(code);
      }
      db.prepare('DELETE FROM knowledge WHERE source = ?').run(code);
    },
  };
}

export function versionOf(e: Pick<KnowledgeEntry, 'key' | 'content'>): string {
  return shortHash(`${e.key}\u0000${normaliseText(e.content)}`);
}

const prepared = new WeakMap<Database, ReturnType<typeof prepareStatements>>();
function prepareStatements(db: Database) {
  return {
    insert: db.prepare(
      'INSERT INTO knowledge (source, seq, version, project, key, type, content, tags, bead, ts, status, noise) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    insertFts: db.prepare('INSERT INTO knowledge_fts (rowid, content, tags, type, key) VALUES (?, ?, ?, ?, ?)'),
    windowStart: db.prepare('SELECT id FROM knowledge WHERE source = ? ORDER BY id DESC LIMIT 1 OFFSET ?'),
    newestTop: db.prepare('SELECT max(id) AS id FROM knowledge_newest WHERE source = ?'),
    sourceAbove: db.prepare('SELECT 1 FROM knowledge WHERE source = ? AND id > ? LIMIT 1'),
    newestBelow: db.prepare('SELECT 1 FROM knowledge_newest WHERE source = ? AND id < ? LIMIT 1'),
    addNewestFts: db.prepare(
      'INSERT INTO knowledge_newest_fts (rowid, content, tags, type, key, source) SELECT id, content, tags, type, ' +
        'key, source FROM knowledge WHERE source = ? AND id >= ? ORDER BY id',
    ),
    addNewest: db.prepare('INSERT INTO knowledge_newest (id, source) SELECT id, source FROM knowledge WHERE source = ? AND id >= ?'),
    forgetNewestFts: db.prepare(
      `INSERT INTO knowledge_newest_fts (knowledge_newest_fts, rowid, content, tags, type, key, source)
       SELECT 'delete', k.id, k.content, k.tags, k.type, k.key, k.source
       FROM knowledge_newest n JOIN knowledge k ON k.id = n.id WHERE n.source = ? AND n.id < ?`,
    ),
    forgetNewest: db.prepare('DELETE FROM knowledge_newest WHERE source = ? AND id < ?'),
    // '-' sorts just before '.': every key starting `base-` (`+source`: by key, not by source)
    keyFamily: db.prepare(
      'SELECT key, content, project FROM knowledge WHERE (key = ? OR (key > ? AND key < ?)) AND +source IN (0, 1) ORDER BY source, seq',
    ),
  };
}
function statements(db: Database) {
  let s = prepared.get(db);
  if (!s) prepared.set(db, (s = prepareStatements(db)));
  return s;
}

export function knowledgeFollowers(store: Store): Record<Source, LogFollower<KnowledgeEntry>> {
  return {
    log: knowledgeFollower(store.knowledgePath, 'log'),
    archive: knowledgeFollower(store.archivePath, 'archive'),
    active: knowledgeFollower(store.activePath, 'active'),
  };
}

export function knowledgeDb(store: Store, sources: Source[], opts: { newest?: boolean } = {}): Database {
  const followers = knowledgeFollowers(store);
  let db: Database | undefined;
  for (const s of sources) db = store.indexed(followers[s]);
  db ??= store.database;
  if (opts.newest) for (const s of sources) syncNewest(db, s);
  return db;
}

export const NEWEST_LINES = ROTATE_ABOVE;

/** Rows join a source with ids above all others: a sync adds above and forgets below the window. */
function syncNewest(db: Database, source: Source): void {
  const code = SOURCE_CODE[source];
  const s = statements(db);
  const plan = () => {
    const floor = (s.windowStart.get(code, NEWEST_LINES - 1) as { id: number } | undefined)?.id ?? 0;
    const top = (s.newestTop.get(code) as { id: number | null }).id ?? 0;
    return {
      floor,
      top,
      change: s.sourceAbove.get(code, Math.max(top, floor - 1)) !== undefined || s.newestBelow.get(code, floor) !== undefined,
    };
  };
  if (!plan().change) return;
  db.transaction(() => {
    const { floor, top } = plan(); // again under the write lock: another process may have synced
    forgetNewest(db, code, floor);
    s.addNewestFts.run(code, Math.max(top + 1, floor));
    s.addNewest.run(code, Math.max(top + 1, floor));
  }).immediate();
}

function forgetNewest(db: Database, code: number, floor: number): void {
  const s = statements(db);
  s.forgetNewestFts.run(code, floor);
  s.forgetNewest.run(code, floor);
}

/** A capture's key family (SPEC §4.1): archive, then log. */
export function keyFamilyLines(db: Database, base: string): { key: string; content: string; project: string }[] {
  return statements(db).keyFamily.all(base, `${base}-`, `${base}.`) as {
    key: string;
    content: string;
    project: string;
  }[];
}

export interface KnowledgeHit {
  id: number;
  key: string;
  type: string;
  content: string;
  bead: string;
  tags: string[];
  ts: number;
  status: string | null;
  archived: boolean;
  score: number;
  /** Tokens of its auto-recall line; `key` says which line and encoding. */
  lineTokens?: { key: string; tokens: number };
}

export interface KnowledgeQuery {
  project: string;
  /** ['log'], ['log', 'archive'] (--all), or ['active'] (with `newest` only). */
  sources: Source[];
  type?: string;
  limit: number;
  withSuperseded?: boolean;
  newest?: boolean;
}

// Ranking (SPEC §4.3; docs/decisions.md, "Knowledge search"): BM25 with positive weights × status and residue factors.
export const BM25_WEIGHTS = [10, 5, 2, 1] as const;
export const NOISE_FACTOR = 0.3;
export const STATUS_FACTORS: Record<string, number> = { canonical: 1.15, needs_review: 0.6 };

/** One term adds less than (k1 + 1) · idf to a row's score. */
const BM25_K1 = 1.2;
/** Beyond its rarest term. */
const FIRST_ROUND_ROWS = 2000;

function filters(q: KnowledgeQuery): { sql: string; params: unknown[] } {
  const codes = q.sources.map((s) => SOURCE_CODE[s]);
  const parts = [
    `k.project IN (?, '')`,
    `k.source IN (${codes.map(() => '?').join(', ')})`,
    `NOT EXISTS (SELECT 1 FROM knowledge later WHERE later.version = k.version AND later.seq > k.seq AND ` +
      `(later.source = 2) = (k.source = 2))`,
  ];
  const params: unknown[] = [q.project, ...codes];
  if (q.type) {
    parts.push('k.type = ?');
    params.push(q.type);
  }
  if (!q.withSuperseded) parts.push(`(k.status IS NULL OR k.status != 'superseded')`);
  return { sql: parts.join(' AND '), params };
}

const COLUMNS = 'k.id, k.key, k.type, k.content, k.bead, k.tags, k.ts, k.status, k.source, k.recall_key, k.recall_tokens';

interface Row {
  id: number;
  key: string;
  type: string;
  content: string;
  bead: string;
  tags: string;
  ts: number;
  status: string | null;
  source: number;
  score: number;
  recall_key: string | null;
  recall_tokens: number | null;
}

function toHit(r: Row): KnowledgeHit {
  const hit: KnowledgeHit = {
    id: r.id,
    key: r.key,
    type: r.type,
    content: r.content,
    bead: r.bead,
    tags: r.tags ? r.tags.split(' ') : [],
    ts: r.ts,
    status: r.status,
    archived: r.source === 0,
    score: r.score,
  };
  if (r.recall_key !== null && r.recall_tokens !== null) hit.lineTokens = { key: r.recall_key, tokens: r.recall_tokens };
  return hit;
}

export function newestEntries(db: Database, sources: Source[]): KnowledgeHit[] {
  const codes = sources.map((s) => SOURCE_CODE[s]);
  const rows = db
    .prepare(
      `SELECT ${COLUMNS}, 0 AS score FROM knowledge_newest n JOIN knowledge k ON k.id = n.id WHERE n.source IN ` +
        `(${codes.map(() => '?').join(', ')})`,
    )
    .all(...codes) as Row[];
  return rows.map(toHit);
}

export function recordLineTokens(db: Database, counted: { id: number; key: string; tokens: number }[]): void {
  const update = db.prepare('UPDATE knowledge SET recall_key = ?, recall_tokens = ? WHERE id = ?');
  db.transaction(() => {
    for (const c of counted) update.run(c.key, c.tokens, c.id);
  }).immediate();
}

const ftsTable = (newest: boolean | undefined) => (newest ? 'knowledge_newest_fts' : 'knowledge_fts');

/** Counted once per search. */
export class TermCounts {
  private readonly memo = new Map<string, number>();
  private readonly statement;
  private rowCount: number | undefined;

  constructor(
    private readonly db: Database,
    private readonly newest = false,
  ) {
    const table = ftsTable(newest);
    this.statement = db.prepare(`SELECT count(*) FROM ${table} WHERE ${table} MATCH ?`).pluck();
  }

  rows(term: string): number {
    let n = this.memo.get(term);
    if (n === undefined) this.memo.set(term, (n = this.statement.get(ftsMatch([term])) as number));
    return n;
  }

  /** BM25's N or more (the bounds need idf no smaller than FTS5's). */
  total(): number {
    this.rowCount ??=
      (this.db
        .prepare(this.newest ? 'SELECT count(*) FROM knowledge_newest' : 'SELECT max(id) FROM knowledge')
        .pluck()
        .get() as number | null) ?? 0;
    return this.rowCount;
  }
}

/** Exact: rows that cannot reach the top k are never scored. */
export function searchKnowledge(
  db: Database,
  q: KnowledgeQuery & { terms: string[] },
  counts = new TermCounts(db, q.newest),
): KnowledgeHit[] {
  const match = ftsMatch(q.terms);
  if (match === undefined || q.limit <= 0) return [];
  const rarestFirst = ftsTerms(q.terms)
    .map((term) => ({ term, rows: counts.rows(term) }))
    .filter((t) => t.rows > 0)
    .sort((a, b) => a.rows - b.rows);
  if (rarestFirst.length === 0) return [];
  const n = counts.total();
  // FTS5's idf
  const bound = (rows: number) => (BM25_K1 + 1) * Math.max(1e-6, Math.log((n - rows + 0.5) / (rows + 0.5)));
  const maxFactor = largestFactor(db);
  const rank = (holding: number) =>
    rankRows(db, q, match, holding < rarestFirst.length ? rarestFirst.slice(0, holding).map((t) => t.term) : undefined, maxFactor);

  let first = 1;
  for (let rows = rarestFirst[0].rows; first < rarestFirst.length && rows + rarestFirst[first].rows <= FIRST_ROUND_ROWS; first++)
    rows += rarestFirst[first].rows;
  let top = rank(first);
  if (first === rarestFirst.length) return top.map(toHit);
  const kth = top.length === q.limit ? top[q.limit - 1].score : 0;
  let needed = rarestFirst.length;
  for (let rest = 0; needed > first && (rest + bound(rarestFirst[needed - 1].rows)) * maxFactor < kth; needed--)
    rest += bound(rarestFirst[needed - 1].rows);
  if (needed > first) top = rank(needed);
  return top.map(toHit);
}

function largestFactor(db: Database): number {
  const statuses = db.prepare('SELECT DISTINCT status FROM knowledge WHERE status IS NOT NULL').pluck().all() as string[];
  return Math.max(1, ...statuses.map((s) => STATUS_FACTORS[s] ?? 1));
}

/** Best raw BM25 first, stopping once no row could beat the k-th kept score with the largest factor. */
function rankRows(db: Database, q: KnowledgeQuery, terms: string, holding: string[] | undefined, maxFactor: number): Row[] {
  const table = ftsTable(q.newest);
  // filtered by `source`, which weighs nothing in BM25
  const match = q.newest
    ? `${ftsMatch(
        q.sources.map((s) => String(SOURCE_CODE[s])),
        { column: 'source' },
      )} AND (${terms})`
    : terms;
  const weights = q.newest ? [...BM25_WEIGHTS, 0] : BM25_WEIGHTS;
  // `+rowid` keeps it a filter: as a rowid constraint FTS5 would run the whole query once per row
  const restriction = holding ? ` AND +rowid IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?)` : '';
  const scored = db
    .prepare(
      `SELECT rowid, -bm25(${table}, ${weights.join(', ')}) AS raw FROM ${table} WHERE ${table} MATCH ?${restriction} ORDER BY raw DESC`,
    )
    .raw();
  const f = filters(q);
  const visible = db.prepare(`SELECT ${COLUMNS}, k.seq, k.noise FROM knowledge k WHERE k.id = ? AND ${f.sql}`);
  const top: (Row & { seq: number })[] = [];
  for (const [id, raw] of scored.iterate(...(holding ? [match, ftsMatch(holding)] : [match])) as Iterable<[number, number]>) {
    if (top.length === q.limit && top[q.limit - 1].score > raw * maxFactor) break;
    const row = visible.get(id, ...f.params) as (Row & { seq: number; noise: number }) | undefined;
    if (!row) continue;
    row.score = raw * (row.noise === 1 ? NOISE_FACTOR : 1) * (STATUS_FACTORS[row.status ?? ''] ?? 1);
    let at = top.length;
    while (at > 0 && ranksBefore(row, top[at - 1])) at--;
    if (at < q.limit) top.splice(at, 0, row);
    if (top.length > q.limit) top.pop();
  }
  return top;
}

/** At equal score the newer entry, then the later line. */
function ranksBefore(a: Row & { seq: number }, b: Row & { seq: number }): boolean {
  return a.score !== b.score ? a.score > b.score : a.ts !== b.ts ? a.ts > b.ts : a.seq > b.seq;
}

export function recentKnowledge(db: Database, q: KnowledgeQuery): KnowledgeHit[] {
  const f = filters(q);
  const rows = db
    .prepare(`SELECT ${COLUMNS}, 0 AS score FROM knowledge k WHERE ${f.sql} ORDER BY k.ts DESC, k.seq DESC LIMIT ?`)
    .all(...f.params, q.limit) as Row[];
  return rows.map(toHit);
}

export interface KnowledgeStats {
  total: number;
  archived: number;
  byType: Record<string, number>;
  topTags: { tag: string; count: number }[];
}

export function knowledgeStats(db: Database, project: string, topTags = 10): KnowledgeStats {
  const f = filters({ project, sources: ['log', 'archive'], limit: 0, withSuperseded: true });
  const rows = db.prepare(`SELECT k.type, k.tags, k.source FROM knowledge k WHERE ${f.sql}`).all(...f.params) as {
    type: string;
    tags: string;
    source: number;
  }[];
  const byType: Record<string, number> = {};
  const tags = new Map<string, number>();
  let archived = 0;
  for (const r of rows) {
    const type = shownType(r.type); // printed: only what they may be
    byType[type] = (byType[type] ?? 0) + 1;
    if (r.source === 0) archived++;
    for (const t of shownTags(r.tags ? r.tags.split(' ') : [])) if (t !== r.type) tags.set(t, (tags.get(t) ?? 0) + 1);
  }
  const top = [...tags].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, topTags);
  return { total: rows.length, archived, byType, topTags: top.map(([tag, count]) => ({ tag, count })) };
}
