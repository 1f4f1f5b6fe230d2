import { isStopWord, words } from '../core/text.js';

// The one FTS5 query builder (ARCHITECTURE seam 6, SPEC §4.3), a security seam: every term is a quoted string,
// so no text from a user, a prompt or a log ever reaches MATCH as syntax.

/** Enough terms for any real query; keeps the MATCH expression bounded for a whole issue file. */
const MAX_QUERY_TERMS = 128;

/** The distinct content words of a text, in order of first use. */
export function queryTerms(text: string, max = MAX_QUERY_TERMS): string[] {
  return [...new Set(words(text).filter((w) => !isStopWord(w)))].slice(0, max);
}

const COLUMN = /^[a-z_][a-z0-9_]*$/;

/** The terms an expression built by ftsMatch holds, in its order. */
export function ftsTerms(terms: string[]): string[] {
  return [...new Set(terms.filter((t) => t !== ''))].slice(0, MAX_QUERY_TERMS);
}

/**
 * Terms as an FTS5 expression of quoted terms joined with OR, optionally within one (fixed) column. Undefined
 * when there is nothing to look for, so the caller can tell "no query" from "no match".
 */
export function ftsMatch(terms: string[], opts: { column?: string } = {}): string | undefined {
  const quoted = ftsTerms(terms).map((t) => `"${t.replace(/"/g, '""')}"`);
  if (quoted.length === 0) return undefined;
  const expression = quoted.join(' OR ');
  if (opts.column === undefined) return expression;
  if (!COLUMN.test(opts.column)) throw new Error(`not a column name: ${JSON.stringify(opts.column)}`);
  return `${opts.column} : (${expression})`;
}

/** A query text as an FTS5 expression (its content words, quoted, OR-ed), or undefined. */
export function ftsQuery(text: string): string | undefined {
  return ftsMatch(queryTerms(text));
}
