import { describe, it, expect } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { ftsMatch, ftsQuery, queryTerms } from '../lib/store/fts.js';

// The one FTS query builder: whatever the input, MATCH gets only quoted terms.

describe('ftsQuery', () => {
  it('quotes every content word and joins them with OR, dropping stop-words and repeats', () => {
    expect(ftsQuery('Where are the refresh tokens stored? Refresh!')).toBe('"refresh" OR "tokens" OR "stored"');
  });

  it('leaves no FTS5 operator, column filter, prefix or grouping in the expression', () => {
    const q = ftsQuery('C++ "foo" -bar AND (x NEAR/3 y) OR text:secret* ^start NOT z');
    expect(q).toBe('"c" OR "foo" OR "bar" OR "x" OR "near" OR "3" OR "y" OR "text" OR "secret" OR "start" OR "z"');
  });

  it('gives no expression, so no relevance signal, for a query of stop-words and punctuation only', () => {
    expect(ftsQuery('the and of -- ( ) " *')).toBeUndefined();
    expect(ftsQuery('')).toBeUndefined();
  });
});

describe('ftsMatch', () => {
  it('doubles a quote inside a term and restricts to a fixed column on request', () => {
    expect(ftsMatch(['say "hi"', 'x'])).toBe('"say ""hi""" OR "x"');
    expect(ftsMatch(['learned'], { column: 'type' })).toBe('type : ("learned")');
    expect(() => ftsMatch(['x'], { column: 'type) OR (x' })).toThrow(/not a column/);
    expect(ftsMatch([])).toBeUndefined();
  });

  it('is accepted by SQLite for hostile input, and finds only the literal words', () => {
    const db = new BetterSqlite3(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5 (content, type, tokenize = 'porter unicode61')`);
    db.prepare('INSERT INTO t (content, type) VALUES (?, ?)').run('the C++ build needs NEAR zero warnings', 'fact');
    db.prepare('INSERT INTO t (content, type) VALUES (?, ?)').run('authentication tokens expire', 'learned');
    const hostile = ['") OR content:*', 'NEAR(a b', '*', '^x', 'col:umn', '"'];
    for (const term of hostile) {
      expect(() => db.prepare('SELECT count(*) FROM t WHERE t MATCH ?').get(ftsMatch([term]))).not.toThrow();
    }
    const hits = (q: string) => (db.prepare('SELECT content FROM t WHERE t MATCH ?').all(q) as { content: string }[]).map((r) => r.content);
    expect(hits(ftsQuery('authenticate')!)).toEqual(['authentication tokens expire']); // porter stemming
    expect(hits(ftsMatch(queryTerms('tokens'), { column: 'type' })!)).toEqual([]);
    expect(hits(ftsMatch(['learned'], { column: 'type' })!)).toEqual(['authentication tokens expire']);
    db.close();
  });
});
