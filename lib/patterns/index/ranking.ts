import { databaseVersion, type Database } from '../../store/db.js';
import { COLUMNS, toPattern, type PatternRecord, type Ranked } from '../queries.js';
import { basePassesSql, baseScoreSql, finalScore, rankIndexUsable, rankKeyBound, scorePattern, SCORE_CUT, type ScoreContext } from '../scoring.js';
import { DECAYING_KEY_SQL, DECAYING_SQL, IMMUNE_KEY_SQL, IMMUNE_SQL } from '../../store/rank-keys.js';
import { bm25Query, matchesSql, matchIn, patternBm25Sql, queryMatches, queryTermsSql, type Bm25Query, type QueryMatches } from './terms.js';

// Ranking a role's candidates (SPEC §3.4, §3.5) inside SQLite, best first, ties by id: only the rows
// a block can hold cross into JavaScript. Three ways, one order:
//   - by the rank indexes (issue 8): each role's patterns read in rank-key order, a page at a time,
//     until no pattern further down any index can beat the best found (lib/patterns/scoring.ts);
//   - with a query, the same walk beside a fourth list, the patterns that match it in BM25 order (over
//     this project's own patterns, summed from the term index's posting lists: lib/patterns/terms.ts
//     queryMatches), every pattern read scored by 0.6 · relevance + 0.4 · base, until no pattern
//     unread in all the lists can reach the best found (a threshold walk: unread, a pattern's
//     relevance is at most the last read in BM25 order, and its base at most its index's bound);
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

/** How many of the best matches of a query a threshold walk sums first (then four times as many, …), and reads at a time. */
const FIRST_MATCHES = 2048;
const MATCH_PAGE = 128;

const byScore = (a: Scored, b: Scored) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function roleParams(roles: string[], params: Record<string, unknown>): string {
  return roles.map((role, i) => ((params[`r${i}`] = role), `@r${i}`)).join(', ');
}

function dismissedClause(opts: RankOptions, params: Record<string, unknown>): string {
  if (!opts.excludeDismissed) return '';
  Object.assign(params, opts.excludeDismissed);
  return 'AND id NOT IN (SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run)';
}

/**
 * A query matched against the candidates: its weights and the best match's BM25, by which every
 * relevance is divided (SPEC §3.4: 0..1 within the candidate set).
 */
interface QueryMatch {
  q: Bm25Query;
  max: number;
}

/** The query's normalised BM25 relevance of each matching pattern, in a temporary table (`cairn_relevance`). */
export function loadRelevance(db: Database, project: string, roles: string[], q: Bm25Query): void {
  db.exec('CREATE TEMP TABLE IF NOT EXISTS cairn_relevance (pid TEXT PRIMARY KEY, relevance REAL NOT NULL) WITHOUT ROWID');
  db.exec('DELETE FROM cairn_relevance');
  const params: Record<string, unknown> = {};
  // MATERIALIZED: the scores are computed once, for the rows and for their maximum
  db.prepare(
    `WITH ${queryTermsSql(q, params)}, bm AS MATERIALIZED (SELECT id, bm FROM (${matchesSql(project, roles, params)}) WHERE ${notDeprecated(roles, params)})
     INSERT INTO cairn_relevance (pid, relevance) SELECT id, bm / (SELECT MAX(bm) FROM bm) FROM bm`,
  ).run(params);
}

/** Of the rows of `id`s, those of patterns not deprecated (the partial index patterns_deprecated). */
function notDeprecated(roles: string[], params: Record<string, unknown>): string {
  return `id NOT IN (SELECT id FROM patterns WHERE project = @project AND role IN (${roleParams(roles, params)}) AND lifecycle = 'deprecated')`;
}

/** How many of a query's best matches are read first for its best candidate, before all of them are. */
const BEST_OF = 64;

/** The highest BM25 among the candidates that match the query; undefined when none does. */
function bestMatch(db: Database, project: string, roles: string[], q: Bm25Query): number | undefined {
  const params: Record<string, unknown> = { bestOf: BEST_OF };
  const terms = queryTermsSql(q, params);
  const matches = matchesSql(project, roles, params);
  const best = db
    .prepare(`WITH ${terms}, top AS MATERIALIZED (${matches} ORDER BY bm DESC LIMIT @bestOf) SELECT MAX(bm) AS max FROM top WHERE ${notDeprecated(roles, params)}`)
    .get(params) as { max: number | null };
  if (best.max !== null) return best.max;
  // the best BEST_OF all deprecated (or fewer matches than that): every match then
  const all = db.prepare(`WITH ${terms} SELECT MAX(bm) AS max FROM (${matches}) WHERE ${notDeprecated(roles, params)}`).get(params) as { max: number | null };
  return all.max ?? undefined;
}

/** A candidate's score in SQL, with relevance blended in as `blend` says; the CTEs it needs go into `withs`, its parameters into `params`. */
function scoreSql(db: Database, opts: RankOptions, blend: Blend, params: Record<string, unknown>, withs: string[]): string {
  const base = baseScoreSql(opts.ctx);
  Object.assign(params, base.params);
  if (blend === null) return base.sql;
  if (blend.kind === 'map') {
    const relevance = opts.relevance!;
    db.function('cairn_relevance', { deterministic: true }, (id: unknown) => relevance.get(String(id)) ?? 0);
    return `(0.6 * cairn_relevance(id) + 0.4 * ${base.sql})`;
  }
  if (blend.kind === 'table') return `(0.6 * COALESCE((SELECT relevance FROM temp.cairn_relevance WHERE pid = patterns.id), 0) + 0.4 * ${base.sql})`;
  withs.push(queryTermsSql(blend.match.q, params));
  params.max = blend.match.max;
  return `(0.6 * COALESCE(${patternBm25Sql()} / @max, 0) + 0.4 * ${base.sql})`;
}

const withClause = (withs: string[]) => (withs.length ? `WITH ${withs.join(', ')} ` : '');

/** The rows that may be candidates: this project's patterns of the roles, not deprecated, not dismissed in the run. */
function candidateRows(opts: RankOptions, params: Record<string, unknown>): string {
  return `project = @project AND role IN (${roleParams(opts.roles, params)}) AND lifecycle != 'deprecated' ${dismissedClause(opts, params)}`;
}

/**
 * How relevance enters the score: from `opts.relevance` (map), from the query's BM25 loaded into
 * temp.cairn_relevance for a pass over every candidate (table), from each pattern's own postings for
 * the few patterns a walk reads (terms), or not at all — also when the query matches no candidate.
 */
type Blend = { kind: 'map' } | { kind: 'table' | 'terms'; match: QueryMatch } | null;

/**
 * The query's weights per connection, with the state of the database they were taken in, its best
 * match once known, and whether temp.cairn_relevance holds its relevance.
 */
interface QueryState {
  key: string;
  q: Bm25Query | undefined;
  /** The best candidate's BM25; null when no candidate matches; undefined until known. */
  max?: number | null;
  table: boolean;
  /** Every match, once a walk summed them. */
  matches?: QueryMatches;
}
const queryStates = new WeakMap<Database, QueryState>();

/** The query's entry for the database as it is now. A summary's basis after the ranking needs the same relevance: each is taken once, unless a pattern changed meanwhile, in this connection or another. */
function queryState(db: Database, project: string, opts: RankOptions & { query: string }): QueryState {
  const key = `${JSON.stringify([project, opts.roles, opts.query])}@${databaseVersion(db)}`;
  let known = queryStates.get(db);
  if (!known || known.key !== key) queryStates.set(db, (known = { key, q: bm25Query(db, project, opts.roles, opts.query), table: false }));
  return known;
}

function blendFor(db: Database, project: string, opts: RankOptions, pass: 'table' | 'terms'): Blend {
  if (opts.relevance) return { kind: 'map' };
  if (opts.query === undefined) return null;
  const known = queryState(db, project, { ...opts, query: opts.query });
  if (!known.q) return null;
  if (known.max === undefined) known.max = bestMatch(db, project, opts.roles, known.q) ?? null;
  if (known.max === null) return null;
  if (pass === 'table' && !known.table) {
    loadRelevance(db, project, opts.roles, known.q); // ~60 ms at 100k patterns
    known.table = true;
  }
  return { kind: pass, match: { q: known.q, max: known.max } };
}

/**
 * Score every candidate, cut below SCORE_CUT, and keep the best `limit`: the way that always works
 * (a configured prior, relevance from embeddings, no rank indexes yet), and the reference the
 * indexed ways are tested against.
 */
export function rankByScan(db: Database, project: string, opts: RankOptions, limit?: number): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  return rankAll(db, project, opts, blendFor(db, project, opts, 'table'), limit);
}

function rankAll(db: Database, project: string, opts: RankOptions, blend: Blend, limit = Infinity): Ranking {
  const params: Record<string, unknown> = { project, cut: SCORE_CUT, limit: limit === Infinity ? -1 : limit + 1 };
  const withs: string[] = [];
  const score = scoreSql(db, opts, blend, params, withs);
  // MATERIALIZED: each score is computed once (a flattened subquery computes it for the cut and again for the order)
  withs.push(`scored AS MATERIALIZED (SELECT id, ${score} AS score FROM patterns WHERE ${candidateRows(opts, params)})`);
  const top = db.prepare(`${withClause(withs)}SELECT id, score FROM scored WHERE score >= @cut ORDER BY score DESC, id LIMIT @limit`).all(params) as Scored[];
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
  const withs: string[] = [];
  const blend = blendFor(db, project, opts, 'table');
  let passes: string;
  if (blend === null) {
    const base = basePassesSql(opts.ctx);
    Object.assign(params, base.params);
    passes = base.sql;
  } else passes = `${scoreSql(db, opts, blend, params, withs)} >= @cut`;
  const row = db
    .prepare(`${withClause(withs)}SELECT COUNT(*) || ':' || COALESCE(SUM(id_bits), 0) AS digest FROM patterns WHERE ${candidateRows(opts, params)} AND ${passes}`)
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
    const withs: string[] = [];
    const score = scoreSql(db, opts, blendFor(db, project, opts, 'terms'), params, withs);
    const rows = candidateRows({ ...opts, roles: [role] }, params);
    return db.prepare(`${withClause(withs)}SELECT 1 FROM patterns WHERE ${rows} AND first_seen > @newest AND ${score} >= @cut LIMIT 1`).get(params) !== undefined;
  });
}

/** The latest first sighting among the patterns of `roles` (what a summary's basis is stored with). */
export function newestFirstSeen(db: Database, project: string, roles: string[]): string | undefined {
  const params: Record<string, unknown> = { project };
  const row = db.prepare(`SELECT MAX(first_seen) AS newest FROM patterns WHERE project = @project AND role IN (${roleParams(roles, params)})`).get(params) as { newest: string | null };
  return row.newest ?? undefined;
}

/**
 * The best `limit` candidates by the rank indexes, and by a query's matches when `query` is given.
 * Each role's two indexes are read a page at a time while the bound of the next row could still reach
 * the best `limit`: its base is at most rankKeyBound of the last key read, and its relevance at most
 * that of the last match read (0 once every match is read). Every pattern read is scored exactly, as
 * the full scan scores it. The walk is kept for the connection: a ranking asked for more (a block
 * whose first page falls short) goes on from where the last one stopped, until a pattern changes.
 */
function rankByKey(db: Database, project: string, opts: RankOptions, limit: number, query: QueryState | null): Ranking {
  const key = `${JSON.stringify([project, opts.roles, opts.ctx, opts.query, opts.excludeDismissed])}@${databaseVersion(db)}`;
  let walk = walks.get(db);
  if (!walk || walk.key !== key) walks.set(db, (walk = new RankWalk(db, project, opts, query, key)));
  return walk.rank(limit);
}

const walks = new WeakMap<Database, RankWalk>();

class RankWalk {
  /** The exact score of every candidate read that passes the cut. */
  private readonly found = new Map<string, number>();
  private readonly matches: ReturnType<typeof bestMatches> | null = null;
  private readonly relevanceOf?: (role: number, seq: number) => number;
  private readonly streams;
  private rowsRead = 0;
  // the best `limit` scores found, highest first (the kth is the last of them): kept as rows are
  // added, where sorting every row found at each page cost ~8 ms of a 100k-pattern `--query`
  private best: number[] = [];
  private limit = 0;

  constructor(
    db: Database,
    project: string,
    private readonly opts: RankOptions,
    query: QueryState | null,
    readonly key: string,
  ) {
    let matches = query && query.max !== null ? bestMatches(db, project, opts, query) : null;
    if (matches) {
      do this.add(matches.next());
      while (query!.max === undefined && !matches.done);
      query!.max ??= null;
      if (query!.max === null) matches = null; // no candidate matches: no relevance signal
    }
    this.matches = matches;
    // A row's relevance is its match's BM25 over the best match's (0 when it matches no term): looked up
    // among the matches summed already, where weighing each row against the query in SQL took eight
    // index lookups a row. Its score is the full scan's arithmetic (finalScore), on the same numbers.
    if (matches) {
      const found = query!.matches!;
      this.relevanceOf = (r, seq) => {
        const at = matchIn(found, r, seq);
        return at < 0 ? 0 : found.bm[at] / query!.max!;
      };
    }
    const base = baseScoreSql(opts.ctx);
    this.streams = opts.roles.flatMap((role, r) =>
      ([[DECAYING_KEY_SQL, DECAYING_SQL, false], [IMMUNE_KEY_SQL, IMMUNE_SQL, true]] as const).map(([key, where, immune]) => {
        const params: Record<string, unknown> = { ...base.params, project, streamRole: role };
        const statement = db.prepare(
          `SELECT id, term_seq AS seq, ${base.sql} AS base, ${key} AS key FROM patterns
           WHERE project = @project AND role = @streamRole AND ${where} ${dismissedClause(opts, params)} AND ${key} <= @lastKey
           ORDER BY ${key} DESC LIMIT @page OFFSET @ties`,
        );
        return { role, r, immune, params, statement, read: 0, lastKey: Infinity, ties: 0, done: false };
      }),
    );
  }

  private add(rows: Scored[]): void {
    const { found, limit } = this;
    for (const r of rows) {
      if (r.score < SCORE_CUT) continue;
      const before = found.get(r.id);
      found.set(r.id, r.score);
      if (before === r.score) continue;
      if (before !== undefined) {
        this.best = [...found.values()].sort((a, b) => b - a).slice(0, limit); // scored twice, differently: count again
        continue;
      }
      const best = this.best;
      let at = best.length;
      while (at > 0 && best[at - 1] < r.score) at--;
      if (at < limit) best.splice(at, 0, r.score);
      if (best.length > limit) best.pop();
    }
  }

  rank(limit: number): Ranking {
    if (limit !== this.limit) {
      this.limit = limit;
      this.best = [...this.found.values()].sort((a, b) => b - a).slice(0, limit);
    }
    const { streams, matches, opts } = this;
    const page = limit + 8;
    for (;;) {
      const best = this.best;
      const kth = best.length >= limit ? Math.max(best[limit - 1], SCORE_CUT) : SCORE_CUT;
      // The bounds come from the rank keys, the scores from each row's base as SQL computes it: a few ulps
      // apart, a tie at the kth score would be cut off where the ids decide (found by a block of 20 lines
      // among 30 tied patterns).
      const relevance = matches ? matches.bound() : 0;
      const baseBound = (s: (typeof streams)[number]) => (s.read === 0 ? Infinity : rankKeyBound(s.lastKey, s.immune, s.role, opts.ctx));
      const bound = (s: (typeof streams)[number]) => (0.6 * relevance + (matches ? 0.4 : 1) * baseBound(s)) * BOUND_SLACK;
      for (const s of streams) if (!s.done && bound(s) < SCORE_CUT) s.done = true;
      const open = streams.filter((s) => !s.done && bound(s) >= kth);
      // Every candidate is in one of the indexes: once each index is read as far as its bound allows,
      // every candidate that could reach the best `limit` is read. Reading the matches deeper lowers
      // those bounds: a page of them is read whenever the indexes have read as many rows as the matches
      // (each list's rows cost about the same, ~5–9 µs at 100k patterns, both read from an index alone).
      if (open.length === 0) {
        const ranked = [...this.found].map(([id, score]) => ({ id, score })).sort(byScore);
        return { top: ranked.slice(0, limit), complete: ranked.length <= limit && streams.every((s) => s.done) };
      }
      if (matches && !matches.done && this.rowsRead >= matches.read) {
        this.add(matches.next());
        continue;
      }
      for (const s of open) {
        // from the last key read on (the rows that share it and were read are skipped), not from an
        // offset, which SQLite reaches by walking every row before it
        const rows = s.statement.all({ ...s.params, page, lastKey: s.lastKey, ties: s.ties }) as { id: string; seq: number; base: number; key: number }[];
        this.add(rows.map((row) => ({ id: row.id, score: finalScore(row.base, this.relevanceOf?.(s.r, row.seq)) })));
        this.rowsRead += rows.length;
        s.read += rows.length;
        if (rows.length < page) s.done = true;
        else {
          const last = rows[rows.length - 1].key;
          s.ties = (last === s.lastKey ? s.ties : 0) + rows.filter((r) => r.key === last).length;
          s.lastKey = last;
        }
      }
    }
  }
}

/**
 * A query's matches in BM25 order (ties by their place among the matches), MATCH_PAGE at a time at
 * each `next()`, each scored as the full scan scores it — the deprecated and dismissed ones are read,
 * for the bound, and left out. The matches are summed once (queryMatches); the best FIRST_MATCHES are
 * put in order first (again four times as many if they run out), and a page of them is read by where
 * each one's postings start. The first page finds the best candidate's BM25 too, when `query.max` is
 * not known yet; `bound()` is the relevance no match further down exceeds.
 */
function bestMatches(db: Database, project: string, opts: RankOptions, query: QueryState) {
  const all = (query.matches ??= queryMatches(db, project, opts.roles, query.q!));
  const base = baseScoreSql(opts.ctx);
  const params: Record<string, unknown> = { ...base.params, project };
  // the deprecated by their seqs; their ids first, from the partial index patterns_deprecated
  const deprecated = new Set(
    db
      .prepare(
        `WITH d AS MATERIALIZED (SELECT id FROM patterns WHERE project = @project AND role IN (${roleParams(opts.roles, params)}) AND lifecycle = 'deprecated')
         SELECT p.term_seq FROM d CROSS JOIN patterns p ON p.project = @project AND p.id = d.id`,
      )
      .pluck()
      .all(params) as number[],
  );
  if (opts.excludeDismissed) Object.assign(params, opts.excludeDismissed);
  const dismissed = opts.excludeDismissed ? 'id IN (SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run)' : '0';
  // a page of matches, each by where its postings start (patterns_seq: one entry of an index that
  // holds what its score reads)
  const pageRows = db.prepare(
    `SELECT id, term_seq AS seq, ${base.sql} AS base, ${dismissed} AS skip FROM patterns WHERE project = @project AND term_seq IN (SELECT value FROM json_each(@seqs))`,
  );
  const score = (matches: number[]): Scored[] => {
    const bm = new Map(matches.map((m) => [all.seqs[m], all.bm[m]]));
    const rows = pageRows.all({ ...params, seqs: JSON.stringify([...bm.keys()]) }) as { id: string; seq: number; base: number; skip: number }[];
    return rows.filter((r) => !r.skip).map((r) => ({ id: r.id, score: finalScore(r.base, bm.get(r.seq)! / query.max!) }));
  };
  let order: number[] = [];
  let depth = 0;
  const stream = {
    read: 0,
    done: false,
    bound: () => (stream.done ? 0 : Math.min(1, (stream.read ? all.bm[order[stream.read - 1]] : Infinity) / query.max!)),
    next(): Scored[] {
      if (stream.read === order.length && order.length === depth) {
        depth = depth === 0 ? FIRST_MATCHES : depth * 4;
        order = bestFirst(all.bm, depth);
      }
      const page = order.slice(stream.read, stream.read + MATCH_PAGE).filter((m) => !deprecated.has(all.seqs[m]));
      if (query.max === undefined && page.length) query.max = all.bm[page[0]]; // the best not deprecated, once one is read
      stream.read = Math.min(order.length, stream.read + MATCH_PAGE);
      stream.done = stream.read === order.length && order.length < depth;
      return query.max === undefined || page.length === 0 ? [] : score(page);
    },
  };
  return stream;
}

/** The places of the `depth` highest values, highest first (ties by place): the depth-th highest found by a numeric sort of a copy, the few above it sorted. */
function bestFirst(values: Float64Array, depth: number): number[] {
  const cut = depth < values.length ? Float64Array.from(values).sort()[values.length - depth] : -Infinity;
  const places: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] >= cut) places.push(i);
  return places.sort((a, b) => values[b] - values[a] || a - b).slice(0, depth);
}

/**
 * Whether the indexes a walk reads exist (the rank indexes, and patterns_seq for a query's matches): a
 * fresh clone's replay sets them aside and builds them at its end, maybe in the background
 * (lib/events/log.ts); without them, one scan beats reading pages by key.
 */
function rankIndexesBuilt(db: Database): boolean {
  const names = ['patterns_rank_decaying', 'patterns_rank_immune', 'patterns_seq'];
  const n = (db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name IN (${names.map((name) => `'${name}'`).join(', ')})`).get() as { n: number }).n;
  return n === names.length;
}

/** Rank the candidates of `opts.roles`: the best `want.limit` (all without one). */
export function rankScores(db: Database, project: string, opts: RankOptions, want: { limit?: number } = {}): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  if (opts.relevance || want.limit === undefined || !rankIndexUsable(opts.ctx) || !rankIndexesBuilt(db)) {
    return rankAll(db, project, opts, blendFor(db, project, opts, 'table'), want.limit);
  }
  const query = opts.query === undefined ? null : queryState(db, project, { ...opts, query: opts.query });
  return rankByKey(db, project, opts, want.limit, query?.q ? query : null);
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
