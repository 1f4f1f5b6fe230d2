import { ftsMatch, queryTerms } from '../store/fts.js';
import type { Database } from '../store/db.js';

// Query terms for knowledge search (SPEC §4.3, §4.4): the content words of a text, without stop-words
// and short words; for a session's context (prompt, bead titles, branch, files) the most distinctive
// of them — the ones that match the fewest entries, never the alphabetically first (SPEC §8).

/** Words shorter than this carry no topic ("to", "8", "0"), unless they mix letters and digits ("v4", "e2"). */
const MIN_WORD = 3;

/** The search terms of a text: distinct content words in order of first use. */
export function recallTerms(text: string): string[] {
  return queryTerms(text).filter((w) => w.length >= MIN_WORD || (/\d/.test(w) && /\p{L}/u.test(w)));
}

/**
 * At most `max` terms of the candidates (in priority order), keeping the most distinctive: a term that
 * matches no entry is dropped; among the rest, fewer matching entries wins, then earlier in the list.
 * Counting costs one index lookup per term, so short candidate lists are taken as they are.
 */
export function distinctiveTerms(db: Database, candidates: string[], max: number): string[] {
  const terms = [...new Set(candidates)];
  if (terms.length <= max) return terms;
  const count = db.prepare('SELECT count(*) AS n FROM knowledge_fts WHERE knowledge_fts MATCH ?');
  const counted = terms.map((term, i) => ({ term, i, n: (count.get(ftsMatch([term])) as { n: number }).n }));
  return counted
    .filter((c) => c.n > 0)
    .sort((a, b) => a.n - b.n || a.i - b.i)
    .slice(0, max)
    .sort((a, b) => a.i - b.i)
    .map((c) => c.term);
}
