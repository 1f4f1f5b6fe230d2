import { shortHash, normaliseText } from '../core/text.js';
import type { Database } from '../store/db.js';
import type { LogFollower } from '../store/follower.js';
import type { Store } from '../store/store.js';
import { ftsMatch } from '../store/fts.js';
import type { KnowledgeEntry } from './entry.js';
import { isCommandLike } from './noise.js';
import { parseEntryLine } from './reader.js';

// The knowledge index (SPEC §4.3): one row per log line in `knowledge`, searched through the FTS5
// table `knowledge_fts` (porter unicode61; content, tags, type, key). Three logs feed it through the
// one follower, each owning its rows: the log, its archive (searched only with --all) and the
// sanitised active cache (auto-recall's working set while it is fresh).
//
// A line is one *version* of an entry: key + normalised content. Curation appends a new line for an
// existing entry (a status, SPEC §4.5) and a union merge may keep a line twice, so only the latest
// line of a version is visible — the log's after the archive's, a later offset after an earlier one.
// The tables are created by the knowledge step of the migration list in lib/store/db.ts.

export type Source = 'archive' | 'log' | 'active';
const SOURCE_CODE: Record<Source, number> = { archive: 0, log: 1, active: 2 };
// Versions compare within the raw logs (archive < log) and within the active cache, never across.
const SEQ_BASE: Record<Source, number> = { archive: 0, log: 2 ** 40, active: 0 };

/** How the follower reads one knowledge log into the index. */
export function knowledgeFollower(path: string, source: Source): LogFollower<KnowledgeEntry> {
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
      const { lastInsertRowid } = statements(db).insert.run(
        code,
        SEQ_BASE[source] + offset,
        versionOf(e),
        e.project ?? '',
        e.key,
        e.type,
        e.content,
        e.tags.join(' '),
        e.bead,
        e.ts,
        e.status ?? null,
        isCommandLike(e.content) ? 1 : 0,
      );
      statements(db).insertFts.run(lastInsertRowid, e.content, e.tags.join(' '), e.type, e.key);
    },
    reset(db) {
      db.prepare(
        `INSERT INTO knowledge_fts (knowledge_fts, rowid, content, tags, type, key)
         SELECT 'delete', id, content, tags, type, key FROM knowledge WHERE source = ?`,
      ).run(code);
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
      'INSERT INTO knowledge (source, seq, version, project, key, type, content, tags, bead, ts, status, noise) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    insertFts: db.prepare('INSERT INTO knowledge_fts (rowid, content, tags, type, key) VALUES (?, ?, ?, ?, ?)'),
  };
}
function statements(db: Database) {
  let s = prepared.get(db);
  if (!s) prepared.set(db, (s = prepareStatements(db)));
  return s;
}

/** The followers of a store's knowledge logs. */
export function knowledgeFollowers(store: Store): Record<Source, LogFollower<KnowledgeEntry>> {
  return {
    log: knowledgeFollower(store.knowledgePath, 'log'),
    archive: knowledgeFollower(store.archivePath, 'archive'),
    active: knowledgeFollower(store.activePath, 'active'),
  };
}

/** The database with the index of each given source up to date. */
export function knowledgeDb(store: Store, sources: Source[]): Database {
  const followers = knowledgeFollowers(store);
  let db: Database | undefined;
  for (const s of sources) db = store.indexed(followers[s]);
  return db ?? store.database;
}

export interface KnowledgeHit {
  /** The index row (stable while the index is). */
  id: number;
  key: string;
  type: string;
  content: string;
  bead: string;
  tags: string[];
  ts: number;
  status: string | null;
  archived: boolean;
  /** Ranking score (higher is better); 0 for the recent-entries listing. */
  score: number;
}

export interface KnowledgeQuery {
  project: string;
  /** Which sources to read: ['log'], ['log', 'archive'] (--all), or ['active']. */
  sources: Source[];
  type?: string;
  limit: number;
  /** Superseded entries are hidden unless asked for (--all). */
  withSuperseded?: boolean;
}

// Ranking (SPEC §4.3; the rules and why are in bench/README.md, "Retrieval quality"): BM25 with
// positive column weights, times a factor for what the log says about the entry — shell residue sinks,
// needs_review is demoted, canonical wins a near-tie — and, at equal score, the newer entry first.
export const BM25_WEIGHTS = [10, 5, 2, 1] as const;
export const NOISE_FACTOR = 0.3;
export const STATUS_FACTORS: Record<string, number> = { canonical: 1.15, needs_review: 0.6 };

const FACTOR_SQL = `(CASE WHEN k.noise = 1 THEN ${NOISE_FACTOR} ELSE 1.0 END) * (CASE k.status ${Object.entries(STATUS_FACTORS)
  .map(([s, f]) => `WHEN '${s}' THEN ${f}`)
  .join(' ')} ELSE 1.0 END)`;

/** The filters every knowledge query shares: project, sources, type, latest version only, superseded. */
function filters(q: KnowledgeQuery): { sql: string; params: unknown[] } {
  const codes = q.sources.map((s) => SOURCE_CODE[s]);
  const parts = [
    `k.project IN (?, '')`,
    `k.source IN (${codes.map(() => '?').join(', ')})`,
    `NOT EXISTS (SELECT 1 FROM knowledge later WHERE later.version = k.version AND later.seq > k.seq AND (later.source = 2) = (k.source = 2))`,
  ];
  const params: unknown[] = [q.project, ...codes];
  if (q.type) {
    parts.push('k.type = ?');
    params.push(q.type);
  }
  if (!q.withSuperseded) parts.push(`(k.status IS NULL OR k.status != 'superseded')`);
  return { sql: parts.join(' AND '), params };
}

const COLUMNS = 'k.id, k.key, k.type, k.content, k.bead, k.tags, k.ts, k.status, k.source';

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
}

function toHit(r: Row): KnowledgeHit {
  return { id: r.id, key: r.key, type: r.type, content: r.content, bead: r.bead, tags: r.tags ? r.tags.split(' ') : [], ts: r.ts, status: r.status, archived: r.source === 0, score: r.score };
}

/** Entries matching any of the terms, best first; the type filter is part of the query, before the limit. */
export function searchKnowledge(db: Database, q: KnowledgeQuery & { terms: string[] }): KnowledgeHit[] {
  const match = ftsMatch(q.terms);
  if (match === undefined) return [];
  const f = filters(q);
  const rows = db
    .prepare(
      `SELECT ${COLUMNS}, -bm25(knowledge_fts, ${BM25_WEIGHTS.join(', ')}) * ${FACTOR_SQL} AS score
       FROM knowledge_fts JOIN knowledge k ON k.id = knowledge_fts.rowid
       WHERE knowledge_fts MATCH ? AND ${f.sql}
       ORDER BY score DESC, k.ts DESC, k.seq DESC LIMIT ?`,
    )
    .all(match, ...f.params, q.limit) as Row[];
  return rows.map(toHit);
}

/** The newest entries (the fallback when a query finds nothing, and `recall --recent N`). */
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

/** Totals, archived, by type and top tags of the visible entries (superseded included: they are history). */
export function knowledgeStats(db: Database, project: string, topTags = 10): KnowledgeStats {
  const f = filters({ project, sources: ['log', 'archive'], limit: 0, withSuperseded: true });
  const rows = db.prepare(`SELECT k.type, k.tags, k.source FROM knowledge k WHERE ${f.sql}`).all(...f.params) as { type: string; tags: string; source: number }[];
  const byType: Record<string, number> = {};
  const tags = new Map<string, number>();
  let archived = 0;
  for (const r of rows) {
    byType[r.type] = (byType[r.type] ?? 0) + 1;
    if (r.source === 0) archived++;
    for (const t of r.tags ? r.tags.split(' ') : []) if (t !== r.type) tags.set(t, (tags.get(t) ?? 0) + 1);
  }
  const top = [...tags].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, topTags);
  return { total: rows.length, archived, byType, topTags: top.map(([tag, count]) => ({ tag, count })) };
}
