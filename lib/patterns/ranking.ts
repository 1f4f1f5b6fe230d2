import type { Database } from '../store/db.js';
import { COLUMNS, toPattern, type PatternRecord, type Ranked } from './queries.js';
import {
  baseScoreSql, DECAYING_KEY_SQL, DECAYING_SQL, IMMUNE_KEY_SQL, IMMUNE_SQL, rankIndexUsable, rankKeyBound, scorePattern, SCORE_CUT, type ScoreContext,
} from './scoring.js';
import { bm25Query, type Bm25Query } from './terms.js';

// Ranking a role's candidates (SPEC §3.4, §3.5) inside SQLite, best first, ties by id: only the rows
// a block can hold cross into JavaScript. Three ways, one order:
//   - by the rank indexes (issue 8): each role's patterns read in rank-key order, a page at a time,
//     until no pattern further down any index can beat the best found (lib/patterns/scoring.ts);
//   - with a query, BM25 over this project's own patterns in the same database (lib/patterns/terms.ts):
//     the matching patterns ranked by 0.6 · relevance + 0.4 · base, the others by the indexes at 0.4 · base;
//   - by scoring every candidate (a configured prior, relevance from embeddings, no rank indexes yet).
// A summary's basis is a digest of the whole candidate set, taken in one aggregate pass (candidateDigest).

export interface RankOptions {
  roles: string[];
  ctx: ScoreContext;
  /** A query to rank by relevance too (BM25 over the project's patterns), when no `relevance` is given. */
  query?: string;
  /** Relevance of each pattern to the query (0..1) from elsewhere (embeddings); it replaces BM25. */
  relevance?: Map<string, number>;
  /** Leave out patterns dismissed as false positives in this issue/run. */
  excludeDismissed?: { issue: string; run: string };
}

export interface Scored {
  id: string;
  score: number;
}

export interface Ranking {
  /** The best candidates, best first (ties by id), at most `limit`. */
  top: Scored[];
  /** Whether `top` holds every candidate that passes the cut. */
  complete: boolean;
}

/** Room for rounding between a bound computed in JavaScript and a score computed in SQL. */
const BOUND_SLACK = 1 + 1e-9;

const BM25_K1 = 1.2;
const BM25_B = 0.75;

const byScore = (a: Scored, b: Scored) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function roleParams(roles: string[], params: Record<string, unknown>): string {
  return roles.map((role, i) => ((params[`r${i}`] = role), `@r${i}`)).join(', ');
}

function dismissedClause(opts: RankOptions, params: Record<string, unknown>): string {
  if (!opts.excludeDismissed) return '';
  Object.assign(params, opts.excludeDismissed);
  return 'AND id NOT IN (SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run)';
}

/** The query's normalised BM25 relevance of each matching pattern, in a temporary table (`cairn_relevance`). */
export function loadRelevance(db: Database, project: string, roles: string[], q: Bm25Query): void {
  db.exec('CREATE TEMP TABLE IF NOT EXISTS cairn_relevance (pid TEXT PRIMARY KEY, relevance REAL NOT NULL) WITHOUT ROWID');
  db.exec('DELETE FROM cairn_relevance');
  const params: Record<string, unknown> = { project, avg: q.avgLength, k1: BM25_K1, b: BM25_B };
  const terms = q.terms.map((t, i) => ((params[`t${i}`] = t.term), (params[`w${i}`] = t.idf), `(@t${i}, @w${i})`)).join(', ');
  db.prepare(
    // Term frequency is 1 (a pattern is one sentence and indexes each term once), so a pattern's BM25
    // is the sum of its matching terms' idf times one factor of its length: the postings are summed
    // first and each matching pattern is read once, not once per term (CROSS JOIN reads the postings of
    // the query's terms only; MATERIALIZED computes the scores once for the rows and their maximum).
    `WITH q (term, idf) AS (VALUES ${terms}),
     m AS (SELECT t.pattern AS id, SUM(q.idf) AS idf FROM q CROSS JOIN pattern_terms t ON t.term = q.term
           WHERE t.project = @project AND t.role IN (${roleParams(roles, params)}) GROUP BY t.pattern),
     bm AS MATERIALIZED (SELECT m.id, m.idf * (@k1 + 1) / (1 + @k1 * (1 - @b + @b * p.ntok / @avg)) AS score
           FROM m CROSS JOIN patterns p ON p.project = @project AND p.id = m.id WHERE p.lifecycle != 'deprecated')
     INSERT INTO cairn_relevance (pid, relevance) SELECT id, score / (SELECT MAX(score) FROM bm) FROM bm WHERE score > 0`,
  ).run(params);
}

/** A candidate's score in SQL, with relevance blended in as `blend` says; its parameters go into `params`. */
function scoreSql(db: Database, opts: RankOptions, blend: Blend, params: Record<string, unknown>): string {
  const base = baseScoreSql(opts.ctx);
  Object.assign(params, base.params);
  if (blend === 'map') {
    const relevance = opts.relevance!;
    db.function('cairn_relevance', { deterministic: true }, (id: unknown) => relevance.get(String(id)) ?? 0);
    return `(0.6 * cairn_relevance(id) + 0.4 * ${base.sql})`;
  }
  if (blend === 'table') return `(0.6 * COALESCE((SELECT relevance FROM temp.cairn_relevance WHERE pid = patterns.id), 0) + 0.4 * ${base.sql})`;
  return base.sql;
}

/** The rows that may be candidates: this project's patterns of the roles, not deprecated, not dismissed in the run. */
function candidateRows(opts: RankOptions, params: Record<string, unknown>): string {
  return `project = @project AND role IN (${roleParams(opts.roles, params)}) AND lifecycle != 'deprecated' ${dismissedClause(opts, params)}`;
}

/** How relevance enters the score: from `opts.relevance`, from BM25 loaded into temp.cairn_relevance, or not at all. */
type Blend = 'map' | 'table' | null;

/** The query whose relevance temp.cairn_relevance holds, per connection, and the state of the database it was taken in. */
const relevanceLoaded = new WeakMap<Database, { key: string; blend: Blend }>();

function blendFor(db: Database, project: string, opts: RankOptions): Blend {
  if (opts.relevance) return 'map';
  if (opts.query === undefined) return null;
  // A summary's basis after the ranking needs the same relevance: it is loaded once (~100 ms at 100k),
  // unless a pattern changed meanwhile, in this connection or another.
  const state = () => `${db.pragma('data_version', { simple: true })}:${(db.prepare('SELECT total_changes() AS n').get() as { n: number }).n}`;
  const key = JSON.stringify([project, opts.roles, opts.query]);
  const loaded = relevanceLoaded.get(db);
  if (loaded && loaded.key === `${key}@${state()}`) return loaded.blend;
  const q = bm25Query(db, project, opts.roles, opts.query);
  if (q) loadRelevance(db, project, opts.roles, q);
  const blend = q ? 'table' : null;
  relevanceLoaded.set(db, { key: `${key}@${state()}`, blend });
  return blend;
}

/**
 * Score every candidate, cut below SCORE_CUT, and keep the best `limit`: the way that always works
 * (a configured prior, relevance from embeddings, no rank indexes yet), and the reference the
 * indexed ways are tested against.
 */
export function rankByScan(db: Database, project: string, opts: RankOptions, limit?: number): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  return rankAll(db, project, opts, blendFor(db, project, opts), limit);
}

function rankAll(db: Database, project: string, opts: RankOptions, blend: Blend, limit = Infinity): Ranking {
  const params: Record<string, unknown> = { project, cut: SCORE_CUT, limit: limit === Infinity ? -1 : limit + 1 };
  const score = scoreSql(db, opts, blend, params);
  // MATERIALIZED: each score is computed once (a flattened subquery computes it for the cut and again for the order)
  const top = db
    .prepare(
      `WITH scored AS MATERIALIZED (SELECT id, ${score} AS score FROM patterns WHERE ${candidateRows(opts, params)})
       SELECT id, score FROM scored WHERE score >= @cut ORDER BY score DESC, id LIMIT @limit`,
    )
    .all(params) as Scored[];
  return { top: top.slice(0, limit), complete: top.length <= limit };
}

/**
 * What a summary's basis hashes (SPEC §3.5 step 4b): how many candidates pass the cut and the sum of
 * their id bits — a digest of the candidate set that SQLite takes in one pass, sorting nothing (hashing
 * the ids in id order cost ~3× as much: issue 8).
 */
export function candidateDigest(db: Database, project: string, opts: RankOptions): string {
  if (opts.roles.length === 0) return '0:0';
  const params: Record<string, unknown> = { project, cut: SCORE_CUT };
  const score = scoreSql(db, opts, blendFor(db, project, opts), params);
  const row = db
    .prepare(`SELECT COUNT(*) || ':' || COALESCE(SUM(id_bits), 0) AS digest FROM patterns WHERE ${candidateRows(opts, params)} AND ${score} >= @cut`)
    .get(params) as { digest: string };
  return row.digest;
}

/**
 * Whether a pattern first seen after `newest` is a candidate now. Such a pattern did not exist when a
 * summary whose basis was taken with `newest` the latest first sighting among its roles was stored
 * (a pattern's first sighting is its earliest observation: events apply in (ts, id) order), so it is
 * not in that basis, and the summary cannot match: SPEC §3.5 step 4b without a pass over every
 * candidate, for a summary that more patterns have overtaken — the common case in a pipeline.
 */
export function newCandidateSince(db: Database, project: string, opts: RankOptions, newest: string): boolean {
  if (opts.roles.length === 0) return false;
  // One role at a time: with a list of roles SQLite walks the whole project rather than the
  // first-sighting index (110 ms at 100k patterns when none is newer); with one, it reads the index
  // from `newest` on and stops at the first candidate.
  return opts.roles.some((role) => {
    const params: Record<string, unknown> = { project, cut: SCORE_CUT, newest };
    const score = scoreSql(db, opts, blendFor(db, project, opts), params);
    const rows = candidateRows({ ...opts, roles: [role] }, params);
    return db.prepare(`SELECT 1 FROM patterns WHERE ${rows} AND first_seen > @newest AND ${score} >= @cut LIMIT 1`).get(params) !== undefined;
  });
}

/** The latest first sighting among the patterns of `roles` (what a summary's basis is stored with). */
export function newestFirstSeen(db: Database, project: string, roles: string[]): string | undefined {
  const params: Record<string, unknown> = { project };
  const row = db.prepare(`SELECT MAX(first_seen) AS newest FROM patterns WHERE project = @project AND role IN (${roleParams(roles, params)})`).get(params) as { newest: string | null };
  return row.newest ?? undefined;
}

/**
 * The best `limit` candidates by the rank indexes, scaled by `scale` (0.4 beside a query), leaving out
 * the patterns in temp.cairn_relevance when `matched` (they are ranked by their relevance), and
 * competing with `seed` (those ranked already). Each role's two indexes are read a page at a time
 * while the bound of the next row (rankKeyBound × scale) could still reach the best `limit`.
 */
function rankByKey(db: Database, project: string, opts: RankOptions, limit: number, scale: number, matched: boolean, seed: Scored[]): Ranking {
  const base = baseScoreSql(opts.ctx);
  const page = limit + 8;
  const found = [...seed];
  const streams = opts.roles.flatMap((role) =>
    ([[DECAYING_KEY_SQL, DECAYING_SQL, false], [IMMUNE_KEY_SQL, IMMUNE_SQL, true]] as const).map(([key, where, immune]) => {
      const params: Record<string, unknown> = { ...base.params, project, streamRole: role, page };
      const statement = db.prepare(
        `SELECT id, ${base.sql} AS score, ${key} AS key FROM patterns
         WHERE project = @project AND role = @streamRole AND ${where} ${dismissedClause(opts, params)}
           ${matched ? 'AND id NOT IN (SELECT pid FROM temp.cairn_relevance)' : ''}
         ORDER BY ${key} DESC LIMIT @page OFFSET @offset`,
      );
      return { role, immune, params, statement, offset: 0, lastKey: Infinity, done: false };
    }),
  );
  for (;;) {
    found.sort(byScore);
    const kth = found.length >= limit ? Math.max(found[limit - 1].score, SCORE_CUT) : SCORE_CUT;
    // A pattern further down a stream can score at most the bound of the last key read there. The bound
    // is computed in JavaScript, the scores in SQL: a few ulps apart, a tie at the kth score would be
    // cut off where the ids decide (found by a block of 20 lines among 30 tied patterns).
    const bound = (s: (typeof streams)[number]) => scale * rankKeyBound(s.lastKey, s.immune, s.role, opts.ctx) * BOUND_SLACK;
    for (const s of streams) if (!s.done && s.offset > 0 && bound(s) < SCORE_CUT) s.done = true;
    const open = streams.filter((s) => !s.done && (s.offset === 0 || bound(s) >= kth));
    if (open.length === 0) break;
    for (const s of open) {
      const rows = s.statement.all({ ...s.params, offset: s.offset }) as { id: string; score: number; key: number }[];
      for (const r of rows) if (scale * r.score >= SCORE_CUT) found.push({ id: r.id, score: scale * r.score });
      s.offset += rows.length;
      if (rows.length < page) s.done = true;
      else s.lastKey = rows[rows.length - 1].key;
    }
  }
  found.sort(byScore);
  return { top: found.slice(0, limit), complete: found.length <= limit && streams.every((s) => s.done) };
}

/**
 * Whether the rank indexes exist: a fresh clone's replay sets them aside and builds them at its end,
 * maybe in the background (lib/events/log.ts); without them, one scan beats reading pages by key.
 */
function rankIndexesBuilt(db: Database): boolean {
  const n = (db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name IN ('patterns_rank_decaying', 'patterns_rank_immune')").get() as { n: number }).n;
  return n === 2;
}

/** Rank the candidates of `opts.roles`: the best `want.limit` (all without one). */
export function rankScores(db: Database, project: string, opts: RankOptions, want: { limit?: number } = {}): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  const blend = blendFor(db, project, opts);
  if (blend === 'map' || want.limit === undefined || !rankIndexUsable(opts.ctx) || !rankIndexesBuilt(db)) return rankAll(db, project, opts, blend, want.limit);
  const q = blend === 'table';
  if (!q) return rankByKey(db, project, opts, want.limit, 1, false, []);
  // The matching patterns by their exact blended score (one query, limited; CROSS JOIN reads the matches
  // first, where SQLite would walk the project's patterns); the others by the indexes.
  const base = baseScoreSql(opts.ctx);
  const params: Record<string, unknown> = { ...base.params, project, cut: SCORE_CUT, limit: want.limit + 1 };
  const matched = db
    .prepare(
      `SELECT id, 0.6 * relevance + 0.4 * ${base.sql} AS score FROM temp.cairn_relevance CROSS JOIN patterns ON project = @project AND id = pid
       WHERE role IN (${roleParams(opts.roles, params)}) AND lifecycle != 'deprecated' ${dismissedClause(opts, params)}
         AND 0.6 * relevance + 0.4 * ${base.sql} >= @cut
       ORDER BY score DESC, id LIMIT @limit`,
    )
    .all(params) as Scored[];
  const ranking = rankByKey(db, project, opts, want.limit, 0.4, true, matched.slice(0, want.limit));
  return { top: ranking.top, complete: ranking.complete && matched.length <= want.limit };
}

/** Full rows for the given scores, in their order, with every factor spelled out. */
export function loadRanked(db: Database, project: string, scores: Scored[], opts: Pick<RankOptions, 'ctx' | 'relevance'>): Ranked[] {
  if (scores.length === 0) return [];
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM patterns WHERE project = ? AND id IN (${scores.map(() => '?').join(', ')})`)
    .all(project, ...scores.map((s) => s.id)) as PatternRecord[];
  const byId = new Map(rows.map((r) => [r.id, toPattern(r)]));
  return scores.map(({ id, score }) => {
    const pattern = byId.get(id)!;
    const relevance = opts.relevance ? (opts.relevance.get(id) ?? 0) : undefined;
    return { pattern, factors: scorePattern(pattern, opts.ctx), relevance, score };
  });
}

/** The best `limit` candidates (all of them without a limit), ranked. */
export function rankPatterns(db: Database, project: string, opts: RankOptions & { limit?: number }): Ranked[] {
  return loadRanked(db, project, rankScores(db, project, opts, { limit: opts.limit }).top, opts);
}
