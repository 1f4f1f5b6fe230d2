import type { Database } from '../../store/db.js';
import { indexTerms } from '../../core/text.js';
import { SCORE_CUT } from '../scoring.js';
import { candidateRows, scoreSql, withClause, type Blend, type RankOptions, type Ranking, type Scored } from './candidates.js';
import { rarestTerms, termWeights, type TermStatistics, type TermWeight } from './weights.js';

// Read every pattern that could be an answer: while the indexes build, and as the parity tests' oracle.

type Row = { id: string; text: string };

/** Read whole once. */
export class ScanLookups implements TermStatistics {
  private patterns?: { id: string; text: string; terms: Set<string> }[];
  private holding?: Map<string, number>;

  constructor(
    private readonly db: Database,
    private readonly project: string,
    readonly role: string,
  ) {}

  private read() {
    if (!this.patterns) {
      const rows = this.db
        .prepare('SELECT id, text FROM patterns WHERE project = ? AND role = ? ORDER BY id')
        .all(this.project, this.role) as Row[];
      this.patterns = rows.map((r) => ({ ...r, terms: new Set(indexTerms(r.text).terms) }));
    }
    return this.patterns;
  }

  documentFrequency(terms: string[]): Map<string, number> {
    if (!this.holding) {
      this.holding = new Map();
      for (const p of this.read()) for (const t of p.terms) this.holding.set(t, (this.holding.get(t) ?? 0) + 1);
    }
    return new Map(terms.map((t) => [t, this.holding!.get(t) ?? 0]));
  }

  size(): { patterns: number; meanLength: number } {
    const patterns = this.read();
    const length = patterns.reduce((sum, p) => sum + p.terms.size, 0);
    return { patterns: patterns.length, meanLength: patterns.length ? length / patterns.length : 1 };
  }

  /** Exact, by id. */
  nearDuplicates(text: string, threshold: number): Row[] {
    const terms = new Set(indexTerms(text).terms);
    if (terms.size === 0) return [];
    return this.read()
      .filter((p) => jaccard(terms, p.terms) >= threshold)
      .map(({ id, text }) => ({ id, text }));
  }

  /** Exact, ties by id. */
  sharing(text: string, limit: number): Row[] {
    const rarest = rarestTerms(this, text);
    if (rarest.length === 0) return [];
    return this.read()
      .map((p) => ({ id: p.id, text: p.text, shared: rarest.filter((t) => p.terms.has(t)).length }))
      .filter((p) => p.shared > 0)
      .sort((a, b) => b.shared - a.shared || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(({ id, text }) => ({ id, text }));
  }

  weights(texts: string[]): TermWeight {
    return termWeights(this, texts);
  }

  packWhatWasRead(): void {}
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Every candidate scored: where the rank indexes cannot (a configured prior, embeddings, no limit, not built yet). */
export function scanRanking(db: Database, project: string, opts: RankOptions, blend: Blend, limit = Infinity): Ranking {
  const params: Record<string, unknown> = { project, cut: SCORE_CUT, limit: limit === Infinity ? -1 : limit + 1 };
  const withs: string[] = [];
  const score = scoreSql(db, opts, blend, params, withs);
  // MATERIALIZED: a flattened subquery computes each score for the cut and again for the order
  withs.push(`scored AS MATERIALIZED (SELECT id, ${score} AS score FROM patterns WHERE ${candidateRows(opts, params)})`);
  const sql = `${withClause(withs)}SELECT id, score FROM scored WHERE score >= @cut
    ORDER BY score DESC, id LIMIT @limit`;
  const top = db.prepare(sql).all(params) as Scored[];
  return { top: top.slice(0, limit), complete: top.length <= limit };
}
