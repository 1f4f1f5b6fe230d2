import { databaseVersion, type Database } from '../../store/db.js';
import { DECAY_IMMUNE_REINFORCEMENTS, DEFAULT_PRIOR, CATEGORY_WEIGHT } from '../../core/score-weights.js';
import { DECAY_SPAN_MS, DECAYING_KEY_SQL, DECAYING_SQL, IMMUNE_KEY_SQL, IMMUNE_SQL } from '../../store/rank-keys.js';
import {
  baseScoreSql,
  contextFactor,
  CROSS_ROLE_FACTOR,
  finalScore,
  successRate,
  SCORE_CUT,
  type ScoreContext,
  type ScoredCounters,
} from '../scoring.js';
import { dismissedClause, type QueryState, type RankOptions, type Ranking, type Scored } from './candidates.js';
import { SIZE_CAP, TermIndex } from './terms.js';
import { bm25, QUERY_TERMS, roleList, type Bm25Query } from './weights.js';

// The fast ranking (SPEC §3.4, §3.5; docs/internals.md, "Ranking"): the rank indexes read best first a page at a time
// until nothing unread can beat the best found; with a query, its matches walked beside them (a threshold walk).

/** A bound in JavaScript against a score in SQL. */
const BOUND_SLACK = 1 + 1e-9;

/** Sorted first (then four times as many), and read at a time. */
const FIRST_MATCHES = 2048;
const MATCH_PAGE = 128;

const byScore = (a: Scored, b: Scored) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** lib/store/rank-keys.ts's SQL is checked against it. */
export function rankKey(p: ScoredCounters): { key: number; immune: boolean } {
  const immune = p.reinforcement_count >= DECAY_IMMUNE_REINFORCEMENTS || p.lifecycle === 'active';
  const rateCat = successRate(p) * (CATEGORY_WEIGHT[p.category] ?? 1);
  return { key: Math.log(rateCat) + (immune ? 0 : p.last_used / DECAY_SPAN_MS), immune };
}

/** In any context: none below it scores more. */
export function rankKeyBound(key: number, immune: boolean, role: string, ctx: ScoreContext): number {
  const context = contextFactor((ctx.labels?.length ?? 0) > 0, (ctx.files?.length ?? 0) > 0, !!ctx.phase);
  const roleFactor = role === ctx.role ? 1 : CROSS_ROLE_FACTOR;
  return Math.exp(immune ? key : key - ctx.now / DECAY_SPAN_MS) * context * roleFactor;
}

/** The rank indexes are built with the default prior. */
export function rankIndexUsable(ctx: ScoreContext): boolean {
  return !ctx.prior || (ctx.prior.success === DEFAULT_PRIOR.success && ctx.prior.failure === DEFAULT_PRIOR.failure);
}

/** Meanwhile the scan ranks. */
export function rankIndexesBuilt(db: Database): boolean {
  const names = ['patterns_rank_decaying', 'patterns_rank_immune', 'patterns_seq'];
  const listed = names.map((name) => `'${name}'`).join(', ');
  const n = (
    db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name IN (${listed})`).get() as {
      n: number;
    }
  ).n;
  return n === names.length;
}

/** Scored as the scan scores. Kept per connection: asked for more, it goes on until a pattern changes. */
export function rankByKey(db: Database, project: string, opts: RankOptions, limit: number, query: QueryState | null): Ranking {
  const state = JSON.stringify([project, opts.roles, opts.ctx, opts.query, opts.excludeDismissed]);
  const key = `${state}@${databaseVersion(db)}`;
  let walk = walks.get(db);
  if (!walk || walk.key !== key) walks.set(db, (walk = new RankWalk(db, project, opts, query, key)));
  return walk.rank(limit);
}

const walks = new WeakMap<Database, RankWalk>();

class RankWalk {
  private readonly found = new Map<string, number>();
  private readonly matches: ReturnType<typeof bestMatches> | null = null;
  private readonly relevanceOf?: (role: number, seq: number) => number;
  private readonly streams;
  private rowsRead = 0;
  // the best `limit` scores found, highest first
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
      if (query!.max === null) matches = null; // no candidate matches: no signal
    }
    this.matches = matches;
    // its match's BM25 over the best's, scored as the scan does (finalScore)
    if (matches) {
      const found = summedMatches.get(query!)!;
      this.relevanceOf = (r, seq) => {
        const at = matchIn(found, r, seq);
        return at < 0 ? 0 : found.bm[at] / query!.max!;
      };
    }
    const base = baseScoreSql(opts.ctx);
    this.streams = opts.roles.flatMap((role, r) =>
      (
        [
          [DECAYING_KEY_SQL, DECAYING_SQL, false],
          [IMMUNE_KEY_SQL, IMMUNE_SQL, true],
        ] as const
      ).map(([key, where, immune]) => {
        const params: Record<string, unknown> = { ...base.params, project, streamRole: role };
        const statement = db.prepare(
          `SELECT id, term_seq AS seq, ${base.sql} AS base, ${key} AS key FROM patterns
           WHERE project = @project AND role = @streamRole AND ${where} ${dismissedClause(opts, params)}
             AND ${key} <= @lastKey
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
      // bounds and SQL scores are a few ulps apart: the slack keeps a tie at the kth score
      const relevance = matches ? matches.bound() : 0;
      const baseBound = (s: (typeof streams)[number]) => (s.read === 0 ? Infinity : rankKeyBound(s.lastKey, s.immune, s.role, opts.ctx));
      const bound = (s: (typeof streams)[number]) => (0.6 * relevance + (matches ? 0.4 : 1) * baseBound(s)) * BOUND_SLACK;
      for (const s of streams) if (!s.done && bound(s) < SCORE_CUT) s.done = true;
      const open = streams.filter((s) => !s.done && bound(s) >= kth);
      // deeper matches lower the bounds: a page of them per as many index rows
      if (open.length === 0) {
        const ranked = [...this.found].map(([id, score]) => ({ id, score })).sort(byScore);
        return { top: ranked.slice(0, limit), complete: ranked.length <= limit && streams.every((s) => s.done) };
      }
      if (matches && !matches.done && this.rowsRead >= matches.read) {
        this.add(matches.next());
        continue;
      }
      for (const s of open) {
        // from the last key on: SQLite reaches an offset by walking every row before it
        const rows = s.statement.all({ ...s.params, page, lastKey: s.lastKey, ties: s.ties }) as {
          id: string;
          seq: number;
          base: number;
          key: number;
        }[];
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

const summedMatches = new WeakMap<QueryState, QueryMatches>();

/** Deprecated and dismissed ones count for the bound only. `bound()`: none further down exceeds it. */
function bestMatches(db: Database, project: string, opts: RankOptions, query: QueryState) {
  let all = summedMatches.get(query);
  if (!all) summedMatches.set(query, (all = queryMatches(db, project, opts.roles, query.q!)));
  const base = baseScoreSql(opts.ctx);
  const params: Record<string, unknown> = { ...base.params, project };
  // ids first, from the partial index patterns_deprecated
  const deprecated = new Set(
    db
      .prepare(
        `WITH d AS MATERIALIZED (SELECT id FROM patterns WHERE project = @project
           AND role IN (${roleList(opts.roles, params)}) AND lifecycle = 'deprecated')
         SELECT p.term_seq FROM d CROSS JOIN patterns p ON p.project = @project AND p.id = d.id`,
      )
      .pluck()
      .all(params) as number[],
  );
  if (opts.excludeDismissed) Object.assign(params, opts.excludeDismissed);
  const dismissed = opts.excludeDismissed
    ? 'id IN (SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run)'
    : '0';
  // patterns_seq covers what the score reads
  const pageRows = db.prepare(
    `SELECT id, term_seq AS seq, ${base.sql} AS base, ${dismissed} AS skip FROM patterns
     WHERE project = @project AND term_seq IN (SELECT value FROM json_each(@seqs))`,
  );
  const score = (matches: number[]): Scored[] => {
    const bm = new Map(matches.map((m) => [all.seqs[m], all.bm[m]]));
    const rows = pageRows.all({ ...params, seqs: JSON.stringify([...bm.keys()]) }) as {
      id: string;
      seq: number;
      base: number;
      skip: number;
    }[];
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
      if (query.max === undefined && page.length) query.max = all.bm[page[0]];
      stream.read = Math.min(order.length, stream.read + MATCH_PAGE);
      stream.done = stream.read === order.length && order.length < depth;
      return query.max === undefined || page.length === 0 ? [] : score(page);
    },
  };
  return stream;
}

/** Ties by place. */
function bestFirst(values: Float64Array, depth: number): number[] {
  const cut = depth < values.length ? Float64Array.from(values).sort()[values.length - depth] : -Infinity;
  const places: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] >= cut) places.push(i);
  return places.sort((a, b) => values[b] - values[a] || a - b).slice(0, depth);
}

/** Deprecated too, BM25 as matchesSql computes it, summed in JavaScript. */
export interface QueryMatches {
  /** term_seq, by role, ascending */
  seqs: Int32Array;
  bm: Float64Array;
  /** one more entry: where the last ends */
  starts: Int32Array;
}

// a posting as one number sorting by seq, then term: (seq · QUERY_TERMS + term) · 2^16 + size < 2^53, so exact
const SIZE_SPAN = SIZE_CAP + 1;

export function queryMatches(db: Database, project: string, roles: string[], q: Bm25Query): QueryMatches {
  const keys = roles.map((role) => {
    const index = new TermIndex(db, project, role);
    const lists = q.terms.map(({ term }) => index.postings(term));
    const sorted = new Float64Array(lists.reduce((sum, l) => sum + l.seqs.length, 0));
    let k = 0;
    lists.forEach(({ seqs, sizes }, t) => {
      for (let i = 0; i < seqs.length; i++) sorted[k++] = (seqs[i] * QUERY_TERMS + t) * SIZE_SPAN + sizes[i];
    });
    return sorted.sort();
  });
  const total = keys.reduce((sum, k) => sum + k.length, 0);
  const out = { seqs: new Int32Array(total), bm: new Float64Array(total), starts: new Int32Array(roles.length + 1) };
  let n = 0;
  const seqOf = (key: number) => Math.floor(key / SIZE_SPAN / QUERY_TERMS);
  const termOf = (key: number) => Math.floor(key / SIZE_SPAN) % QUERY_TERMS;
  keys.forEach((sorted, r) => {
    out.starts[r] = n;
    for (let i = 0; i < sorted.length; ) {
      const seq = seqOf(sorted[i]);
      out.seqs[n] = seq;
      const size = sorted[i] % SIZE_SPAN;
      let weights = 0; // whole numbers (BM25_UNIT): exact in any order
      for (; i < sorted.length && seqOf(sorted[i]) === seq; i++) weights += q.terms[termOf(sorted[i])].weight;
      out.bm[n++] = bm25(weights, size, q.avgLength);
    }
  });
  out.starts[roles.length] = n;
  return { seqs: out.seqs.slice(0, n), bm: out.bm.slice(0, n), starts: out.starts };
}

export function matchIn(m: QueryMatches, r: number, seq: number): number {
  let lo = m.starts[r];
  let hi = m.starts[r + 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (m.seqs[mid] < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo < m.starts[r + 1] && m.seqs[lo] === seq ? lo : -1;
}
