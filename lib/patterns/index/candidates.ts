import { databaseVersion, type Database } from '../../store/db.js';
import { DECAY_SPAN_MS, DECAYING_KEY_SQL, DECAYING_SQL, IMMUNE_KEY_SQL, IMMUNE_SQL } from '../../store/rank-keys.js';
import { baseScoreSql, contextFactor, CROSS_ROLE_FACTOR, SCORE_CUT, type ScoreContext } from '../scoring.js';
import { loadRelevance, matchesSql, notDeprecated, patternBm25Sql, queryTermsSql, roleList, type Bm25Query } from './weights.js';

// A role's candidates in SQL (SPEC §3.5 step 1): rows, scores (§3.4), the digest (§3.5 step 4b).

export interface RankOptions {
  roles: string[];
  ctx: ScoreContext;
  /** BM25, when no `relevance` is given. */
  query?: string;
  /** From embeddings, 0..1; replaces BM25. */
  relevance?: Map<string, number>;
  excludeDismissed?: { issue: string; run: string };
}

export interface Scored {
  id: string;
  score: number;
}

export interface Ranking {
  top: Scored[];
  complete: boolean;
}

export function dismissedClause(opts: RankOptions, params: Record<string, unknown>): string {
  if (!opts.excludeDismissed) return '';
  Object.assign(params, opts.excludeDismissed);
  return 'AND id NOT IN (SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run)';
}

export function candidateRows(opts: RankOptions, params: Record<string, unknown>): string {
  return `project = @project AND role IN (${roleList(opts.roles, params)})
    AND lifecycle != 'deprecated' ${dismissedClause(opts, params)}`;
}

export const withClause = (withs: string[]) => (withs.length ? `WITH ${withs.join(', ')} ` : '');

/** Keyed by the database's state: a summary's basis after a ranking reuses it. */
export interface QueryState {
  key: string;
  q: Bm25Query | undefined;
  /** The best candidate's BM25; null: none matches. */
  max?: number | null;
  table: boolean;
}
const queryStates = new WeakMap<Database, QueryState>();

export function queryState(db: Database, project: string, roles: string[], query: string, weigh: () => Bm25Query | undefined): QueryState {
  const key = `${JSON.stringify([project, roles, query])}@${databaseVersion(db)}`;
  let known = queryStates.get(db);
  if (!known || known.key !== key) queryStates.set(db, (known = { key, q: weigh(), table: false }));
  return known;
}

/** Matches read first for the best candidate, before all are. */
const BEST_OF = 64;

function bestMatch(db: Database, project: string, roles: string[], q: Bm25Query): number | undefined {
  const params: Record<string, unknown> = { bestOf: BEST_OF };
  const terms = queryTermsSql(q, params);
  const matches = matchesSql(project, roles, params);
  const best = db
    .prepare(
      `WITH ${terms}, top AS MATERIALIZED (${matches} ORDER BY bm DESC LIMIT @bestOf)
        SELECT MAX(bm) AS max FROM top WHERE ${notDeprecated(roles, params)}`,
    )
    .get(params) as { max: number | null };
  if (best.max !== null) return best.max;
  // those all deprecated (or fewer): every match then
  const all = db.prepare(`WITH ${terms} SELECT MAX(bm) AS max FROM (${matches}) WHERE ${notDeprecated(roles, params)}`).get(params) as {
    max: number | null;
  };
  return all.max ?? undefined;
}

/** map: `opts.relevance`; table: temp.cairn_relevance, for a pass over all; terms: postings, for the few a walk reads. */
export type Blend = { kind: 'map' } | { kind: 'table' | 'terms'; q: Bm25Query; max: number } | null;

export function blendFor(db: Database, project: string, opts: RankOptions, query: QueryState | null, pass: 'table' | 'terms'): Blend {
  if (opts.relevance) return { kind: 'map' };
  if (!query?.q) return null;
  if (query.max === undefined) query.max = bestMatch(db, project, opts.roles, query.q) ?? null;
  if (query.max === null) return null;
  if (pass === 'table' && !query.table) {
    loadRelevance(db, project, opts.roles, query.q);
    query.table = true;
  }
  return { kind: pass, q: query.q, max: query.max };
}

/** The CTEs it needs go into `withs`. */
export function scoreSql(db: Database, opts: RankOptions, blend: Blend, params: Record<string, unknown>, withs: string[]): string {
  const base = baseScoreSql(opts.ctx);
  Object.assign(params, base.params);
  if (blend === null) return base.sql;
  if (blend.kind === 'map') {
    const relevance = opts.relevance!;
    db.function('cairn_relevance', { deterministic: true }, (id: unknown) => relevance.get(String(id)) ?? 0);
    return `(0.6 * cairn_relevance(id) + 0.4 * ${base.sql})`;
  }
  if (blend.kind === 'table')
    return `(0.6 * COALESCE((SELECT relevance FROM temp.cairn_relevance WHERE pid = patterns.id), 0)
        + 0.4 * ${base.sql})`;
  withs.push(queryTermsSql(blend.q, params));
  params.max = blend.max;
  return `(0.6 * COALESCE(${patternBm25Sql()} / @max, 0) + 0.4 * ${base.sql})`;
}

/** Above every context factor (1.35 at most), in any rounding. */
const CONTEXT_BOUND = 1.36;

/** Exact; mostly decided without the context factor's JSON searches: a factor in 1..1.35 only grows it. */
export function basePassesSql(ctx: ScoreContext): { sql: string; params: Record<string, unknown> } {
  const base = baseScoreSql(ctx);
  const { rest, role } = base.parts;
  const sql = `(CASE WHEN ${rest} * ${role} >= @cut THEN 1
      WHEN ${rest} * ${CONTEXT_BOUND} * ${role} < @cut THEN 0 ELSE ${base.sql} >= @cut END)`;
  return { sql, params: base.params };
}

/** In one pass. */
export function candidateDigest(db: Database, project: string, opts: RankOptions, query: QueryState | null): string {
  if (opts.roles.length === 0) return '0:0';
  const params: Record<string, unknown> = { project, cut: SCORE_CUT };
  const withs: string[] = [];
  const blend = blendFor(db, project, opts, query, 'table');
  let passes: string;
  if (blend === null) {
    const base = basePassesSql(opts.ctx);
    Object.assign(params, base.params);
    passes = base.sql;
  } else passes = `${scoreSql(db, opts, blend, params, withs)} >= @cut`;
  const row = db
    .prepare(
      `${withClause(withs)}SELECT COUNT(*) || ':' || COALESCE(SUM(id_bits), 0) AS digest
        FROM patterns WHERE ${candidateRows(opts, params)} AND ${passes}`,
    )
    .get(params) as { digest: string };
  return row.digest;
}

/** A bound on a rank key against a score from the same row. */
const KEY_SLACK = 1e-9;

/** The same digest off the rank indexes (default prior): the candidate digest of ./README.md. */
export function digestByKey(db: Database, project: string, opts: RankOptions, query: QueryState | null): string {
  if (opts.roles.length === 0) return '0:0';
  const blend = blendFor(db, project, opts, query, 'table');
  const share = blend === null ? 1 : 0.4;
  const base = baseScoreSql(opts.ctx);
  const { labels, files, phase } = opts.ctx;
  const widest = contextFactor(!!labels?.length, !!files?.length, !!phase);
  let n = 0n;
  let bits = 0n;
  const add = (sql: string, params: Record<string, unknown>) => {
    const row = db.prepare(sql).safeIntegers().get(params) as { n: bigint; bits: bigint };
    n += row.n;
    bits += row.bits;
  };
  for (const role of opts.roles) {
    const factor = share * (role === opts.ctx.role ? 1 : CROSS_ROLE_FACTOR);
    for (const [key, where, immune] of [
      [DECAYING_KEY_SQL, DECAYING_SQL, false],
      [IMMUNE_KEY_SQL, IMMUNE_SQL, true],
    ] as const) {
      const shift = immune ? 0 : opts.ctx.now / DECAY_SPAN_MS;
      const params: Record<string, unknown> = {
        ...base.params,
        project,
        cut: SCORE_CUT,
        streamRole: role,
        sure: Math.log((SCORE_CUT * (1 + KEY_SLACK)) / factor) + shift,
        least: Math.log((SCORE_CUT * (1 - KEY_SLACK)) / (factor * widest)) + shift,
      };
      // a decaying row last used after now has no decay yet, which its key overstates: scored
      const sure = `${key} >= @sure${immune ? '' : ' AND last_used <= @now'}`;
      add(
        `SELECT COUNT(*) AS n, COALESCE(SUM(id_bits), 0) AS bits FROM patterns
          WHERE project = @project AND role = @streamRole AND ${where} ${dismissedClause(opts, params)}
            AND ${key} >= @least AND (CASE WHEN ${sure} THEN 1 ELSE ${share} * ${base.sql} >= @cut END)`,
        params,
      );
    }
  }
  if (blend !== null) {
    // the ranges counted each match as matching nothing (0.4 of its base): counted again by its whole score
    const params: Record<string, unknown> = {
      project,
      cut: SCORE_CUT,
      high: SCORE_CUT * (1 + KEY_SLACK),
      low: SCORE_CUT * (1 - KEY_SLACK),
    };
    const withs: string[] = [];
    // rest × role (no context factor) decides most rows
    const { rest, role } = base.parts;
    const passes = (relevance: string, exact: string) => `(CASE WHEN ${relevance} + ${share} * ${rest} * ${role} >= @high THEN 1
      WHEN ${relevance} + ${share} * ${rest} * ${role} * ${widest} < @low THEN 0 ELSE ${exact} >= @cut END)`;
    const change = `(${passes('0.6 * m.relevance', scoreSql(db, opts, blend, params, withs))} - ${passes('0', `${share} * ${base.sql}`)})`;
    add(
      `${withClause(withs)}SELECT COALESCE(SUM(${change}), 0) AS n, COALESCE(SUM(${change} * id_bits), 0) AS bits
        FROM temp.cairn_relevance AS m CROSS JOIN patterns ON patterns.project = @project AND patterns.id = m.pid
        WHERE ${candidateRows(opts, params)}`,
      params,
    );
  }
  return `${n}:${bits}`;
}

/** Not in a basis taken with `newest` the latest first sighting: that summary is stale, no pass needed. */
export function newCandidateSince(db: Database, project: string, opts: RankOptions, query: QueryState | null, newest: string): boolean {
  if (opts.roles.length === 0) return false;
  // one role at a time: with a list SQLite walks the whole project
  return opts.roles.some((role) => {
    const params: Record<string, unknown> = { project, cut: SCORE_CUT, newest };
    const withs: string[] = [];
    const score = scoreSql(db, opts, blendFor(db, project, opts, query, 'terms'), params, withs);
    const rows = candidateRows({ ...opts, roles: [role] }, params);
    return (
      db
        .prepare(
          `${withClause(withs)}SELECT 1 FROM patterns WHERE ${rows}
            AND first_seen > @newest AND ${score} >= @cut LIMIT 1`,
        )
        .get(params) !== undefined
    );
  });
}
