import { isStopWord, words } from '../core/text.js';

// The one FTS5 query builder (SPEC §4.3), a security seam: every term a quoted string, so no text reaches MATCH as syntax.

/** Bounds the MATCH expression, even for a whole issue file. */
const MAX_QUERY_TERMS = 128;

export function queryTerms(text: string, max = MAX_QUERY_TERMS): string[] {
  return [...new Set(words(text).filter((w) => !isStopWord(w)))].slice(0, max);
}

const COLUMN = /^[a-z_][a-z0-9_]*$/;

/** In its order. */
export function ftsTerms(terms: string[]): string[] {
  return [...new Set(terms.filter((t) => t !== ''))].slice(0, MAX_QUERY_TERMS);
}

/** Undefined when there is nothing to look for: "no query" is not "no match". */
export function ftsMatch(terms: string[], opts: { column?: string } = {}): string | undefined {
  const quoted = ftsTerms(terms).map((t) => `"${t.replace(/"/g, '""')}"`);
  if (quoted.length === 0) return undefined;
  const expression = quoted.join(' OR ');
  if (opts.column === undefined) return expression;
  if (!COLUMN.test(opts.column)) throw new Error(`not a column name: ${JSON.stringify(opts.column)}`);
  return `${opts.column} : (${expression})`;
}

export function ftsQuery(text: string): string | undefined {
  return ftsMatch(queryTerms(text));
}
