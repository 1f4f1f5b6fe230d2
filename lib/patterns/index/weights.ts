import type { Database } from '../../store/db.js';
import { contentTerms } from '../../core/text.js';

// What a term weighs among a role's patterns: a finding's words for a link (SPEC §3.9.1), a query's for BM25 (§3.4).

export interface TermStatistics {
  size(): { patterns: number; meanLength: number };
  documentFrequency(terms: string[]): Map<string, number>;
}

export type TermWeight = (term: string) => number;

const SHARING_TERMS = 6;

/** `ln(1 + patterns / holding)`; `texts`' terms counted at once. */
export function termWeights(stats: TermStatistics, texts: string[]): TermWeight {
  let patterns: number | undefined;
  let counted = false;
  const weights = new Map<string, number>(); // a link weighs each term many times over
  return (term) => {
    let weight = weights.get(term);
    if (weight !== undefined) return weight;
    if (!counted) {
      counted = true;
      stats.documentFrequency(texts.flatMap((t) => [...contentTerms(t).keys()]));
    }
    patterns ??= stats.size().patterns;
    weight = Math.log(1 + Math.max(1, patterns) / Math.max(1, stats.documentFrequency([term]).get(term)!));
    weights.set(term, weight);
    return weight;
  };
}

/** Those some pattern holds, rarest first (ties by term). */
export function rarestTerms(stats: TermStatistics, text: string): string[] {
  const terms = [...contentTerms(text).keys()];
  const df = stats.documentFrequency(terms);
  return terms
    .filter((t) => df.get(t)! > 0)
    .sort((a, b) => df.get(a)! - df.get(b)! || (a < b ? -1 : 1))
    .slice(0, SHARING_TERMS);
}

/** Idfs in whole BM25_UNITs: a pattern's sum is exact in any order. */
export interface Bm25Query {
  terms: { term: string; weight: number }[];
  avgLength: number;
}

const BM25_UNIT = 2 ** -20;
const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** A term in more than this share of the patterns says too little to read its postings. */
const COMMON_SHARE = 0.5;
/** The rarest, at most. */
export const QUERY_TERMS = 32;

/** Over the project's own patterns: another project in a shared store moves nothing. */
export function bm25Query(roles: TermStatistics[], query: string): Bm25Query | undefined {
  const terms = [...contentTerms(query).keys()].slice(0, 128);
  if (terms.length === 0 || roles.length === 0) return undefined;
  const sizes = roles.map((role) => role.size());
  const n = sizes.reduce((sum, s) => sum + s.patterns, 0);
  if (n === 0) return undefined;
  const avgLength = sizes.reduce((sum, s) => sum + s.patterns * s.meanLength, 0) / n;
  const holding = roles.map((role) => role.documentFrequency(terms));
  const df = terms.map((term) => ({ term, df: holding.reduce((sum, h) => sum + h.get(term)!, 0) }));
  const kept = df
    .filter((d) => d.df > 0 && d.df <= Math.max(1, n * COMMON_SHARE))
    .sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1))
    .slice(0, QUERY_TERMS);
  if (kept.length === 0) return undefined;
  const idf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
  return { terms: kept.map((d) => ({ term: d.term, weight: Math.round(idf(d.df) / BM25_UNIT) })), avgLength };
}

/** bm25Sql operation for operation: the very same number (tested). */
export function bm25(weights: number, length: number, avgLength: number): number {
  return (weights * BM25_UNIT * (BM25_K1 + 1)) / (1 + BM25_K1 * (1 - BM25_B + (BM25_B * length) / avgLength));
}

/** A CTE `q (term, w)`; bm25Sql's constants go into `params`. */
export function queryTermsSql(q: Bm25Query, params: Record<string, unknown>): string {
  Object.assign(params, { bmUnit: BM25_UNIT, bmK1: BM25_K1, bmB: BM25_B, bmAvg: q.avgLength });
  const rows = q.terms.map((t, i) => ((params[`qt${i}`] = t.term), (params[`qw${i}`] = t.weight), `(@qt${i}, @qw${i})`));
  return `q (term, w) AS (VALUES ${rows.join(', ')})`;
}

/** Term frequency is 1; one expression, so every statement gives the same number. */
export function bm25Sql(weights: string, length: string): string {
  return `(${weights} * @bmUnit * (@bmK1 + 1) / (1 + @bmK1 * (1 - @bmB + @bmB * ${length} / @bmAvg)))`;
}

/** Deprecated too: testing each match costs as much as the sum. */
export function matchesSql(project: string, roles: string[], params: Record<string, unknown>): string {
  params.project = project;
  const list = roles.map((role, i) => ((params[`mr${i}`] = role), `@mr${i}`)).join(', ');
  return `SELECT id, bm FROM (SELECT t.pattern AS id, ${bm25Sql('SUM(q.w)', 't.ntok')} AS bm
    FROM q CROSS JOIN pattern_terms t ON t.term = q.term
      WHERE t.project = @project AND t.role IN (${list}) GROUP BY t.seq) WHERE bm > 0`;
}

/** Of the current `patterns` row, from its postings; NULL when it matches no term. */
export function patternBm25Sql(): string {
  return bm25Sql(
    `(SELECT SUM(q.w) FROM q CROSS JOIN pattern_terms t ON t.project = patterns.project AND t.role = patterns.role ` +
      `AND t.term = q.term AND t.seq = patterns.term_seq)`,
    'patterns.ntok',
  );
}

/** By the partial index patterns_deprecated. */
export function notDeprecated(roles: string[], params: Record<string, unknown>): string {
  return `id NOT IN (SELECT id FROM patterns WHERE project = @project
    AND role IN (${roleList(roles, params)}) AND lifecycle = 'deprecated')`;
}

export function roleList(roles: string[], params: Record<string, unknown>): string {
  return roles.map((role, i) => ((params[`r${i}`] = role), `@r${i}`)).join(', ');
}

/** BM25 over the best match's (SPEC §3.4: 0..1). */
export function loadRelevance(db: Database, project: string, roles: string[], q: Bm25Query): void {
  db.exec('CREATE TEMP TABLE IF NOT EXISTS cairn_relevance (pid TEXT PRIMARY KEY, relevance REAL NOT NULL) WITHOUT ROWID');
  db.exec('DELETE FROM cairn_relevance');
  const params: Record<string, unknown> = {};
  // MATERIALIZED: computed once, for the rows and their maximum
  db.prepare(
    `WITH ${queryTermsSql(q, params)}, bm AS MATERIALIZED (SELECT id, bm FROM (${matchesSql(project, roles, params)})
      WHERE ${notDeprecated(roles, params)})
     INSERT INTO cairn_relevance (pid, relevance) SELECT id, bm / (SELECT MAX(bm) FROM bm) FROM bm`,
  ).run(params);
}

export function loadedRelevance(db: Database): Map<string, number> {
  const rows = db.prepare('SELECT pid, relevance FROM temp.cairn_relevance ORDER BY pid').all() as {
    pid: string;
    relevance: number;
  }[];
  return new Map(rows.map((r) => [r.pid, r.relevance]));
}
