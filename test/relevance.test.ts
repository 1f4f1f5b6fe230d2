import { describe, it, expect } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTestStore, run, tempProject, type RunResult } from './helpers.js';
import { embeddingRelevanceFor } from '../lib/patterns/relevance.js';
import { bm25Relevance } from '../lib/patterns/index/index.js';
import { patternId } from '../lib/core/ids.js';
import { appendEvents, patternDb } from '../lib/events/log.js';

// Query relevance (SPEC §3.4): the FTS5 BM25 match of the query against pattern text, normalised to
// 0..1 within the candidates, blended into format-patterns' ranking as 0.6·relevance + 0.4·base.

const PROJECT = 'ledgerly';
const NOW = '2025-03-02T12:00:00Z';

const MAN_PAGE = 'Every new CLI flag must be documented in the man page before merge'; // a rule: base 1.3
const REFRESH = 'ledgerly stores refresh tokens in Postgres rather than Redis'; // an observation: base 1.0
const AUTH = 'Token authentication failures are logged with the client id';
const INDEX = 'New columns that queries filter on should get an index in the same migration';
const JUDGE_OUTPUT = 'Diffs that change a public output shape must update the contract test in the same commit';
const id = (role: string, text: string) => patternId(PROJECT, role, text);

function storeDeliberation(dir: string, role: string, items: string[], project = PROJECT): void {
  const r = run('store-deliberation', ['--role', role, '--issue', 'LED-1', '--run', 'r1', '--project', project, '--strict'], {
    cwd: dir,
    input: `## Plan review\nFine.\n\n## Accumulated Patterns\n${items.map((t) => `- ${t}`).join('\n')}\n`,
    env: { CAIRN_NOW: '2025-03-01T12:00:00Z' },
  });
  expect(r.code, r.stderr).toBe(0);
}

function seed(): string {
  const dir = tempProject();
  storeDeliberation(dir, 'auditor', [MAN_PAGE, REFRESH, AUTH, INDEX]);
  storeDeliberation(dir, 'judge', [JUDGE_OUTPUT]);
  return dir;
}

function formatPatterns(dir: string, args: string[]): RunResult {
  return run('format-patterns', ['--role', 'auditor', '--project', PROJECT, ...args], {
    cwd: dir,
    env: { CAIRN_NOW: NOW },
  });
}

function rankedTexts(dir: string, args: string[]): string[] {
  const r = formatPatterns(dir, [...args, '--json', '--strict']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout).patterns as { text: string }[]).map((p) => p.text);
}

describe('bm25Relevance', () => {
  it('scores the best match 1, weaker matches between 0 and 1, and leaves non-matches out', () => {
    const store = openTestStore(seed(), PROJECT);
    const rel = bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'refresh tokens in Redis')!;
    expect(rel.get(id('auditor', REFRESH))).toBe(1);
    const auth = rel.get(id('auditor', AUTH))!; // shares only "token"
    expect(auth).toBeGreaterThan(0);
    expect(auth).toBeLessThan(1);
    expect(rel.has(id('auditor', MAN_PAGE))).toBe(false);
  });

  it('matches word forms through porter stemming: "authenticate" finds "authentication"', () => {
    const store = openTestStore(seed(), PROJECT);
    expect(bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'authenticate')?.get(id('auditor', AUTH))).toBe(1);
    expect(bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'migrations indexes')?.get(id('auditor', INDEX))).toBe(1);
  });

  it('never errors on FTS5 syntax in the query', () => {
    const store = openTestStore(seed(), PROJECT);
    for (const q of [
      'C++ "foo" -bar AND (x',
      '"',
      'NEAR(a b)',
      'text:token',
      'refresh*',
      '^start',
      'a OR',
      'NOT',
      '(((',
      "it's",
      '—',
      'token" OR "1"="1',
    ]) {
      expect(() => bm25Relevance(patternDb(store), PROJECT, ['auditor'], q)).not.toThrow();
    }
    expect(bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'token" OR "1"="1')?.get(id('auditor', AUTH))).toBeGreaterThan(0);
  });

  it('only sees the given roles, this project, and live patterns', () => {
    const dir = seed();
    storeDeliberation(dir, 'auditor', ['Refresh tokens of the other project are kept in Redis'], 'other-project');
    const store = openTestStore(dir, PROJECT);
    const rel = bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'refresh tokens redis contract test')!;
    expect([...rel.keys()].sort()).toEqual([id('auditor', REFRESH), id('auditor', AUTH)].sort());
    expect([...bm25Relevance(patternDb(store), PROJECT, ['judge'], 'refresh tokens redis contract test')!.keys()]).toEqual([
      id('judge', JUDGE_OUTPUT),
    ]);

    appendEvents(store, [{ type: 'pattern.deprecated', pattern: id('auditor', REFRESH), reason: 'moved to Redis', auto: false }]);
    const after = bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'refresh tokens redis')!;
    expect(after.has(id('auditor', REFRESH))).toBe(false);
    expect(after.get(id('auditor', AUTH))).toBe(1); // normalised within the live candidates
  });

  it('without an embeddings provider there is no relevance map: format-patterns ranks by BM25 inside SQLite', () => {
    const store = openTestStore(seed(), PROJECT);
    expect(embeddingRelevanceFor(store, 'refresh tokens', ['auditor'])).toBeUndefined();
    expect(bm25Relevance(patternDb(store), PROJECT, ['auditor'], 'the of and')).toBeUndefined();
  });
});

describe('format-patterns --query', () => {
  it('ranks a query-relevant pattern above an otherwise higher-scored one', () => {
    const dir = seed();
    const plain = rankedTexts(dir, []);
    expect(plain.indexOf(MAN_PAGE)).toBeLessThan(plain.indexOf(REFRESH));
    const queried = rankedTexts(dir, ['--query', 'where are refresh tokens stored?']);
    expect(queried[0]).toBe(REFRESH);
    expect(queried.indexOf(REFRESH)).toBeLessThan(queried.indexOf(MAN_PAGE));
  });

  it('reads the query from --query-file', () => {
    const dir = seed();
    const file = join(dir, 'issue.md');
    writeFileSync(file, '# LED-103\n\nAdd an index for the new due_date column in the migration.\n');
    expect(rankedTexts(dir, ['--query-file', file])[0]).toBe(INDEX);
    const both = formatPatterns(dir, ['--query', 'x', '--query-file', file, '--strict']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--query or --query-file');
  });

  it('takes FTS5 syntax in the query as plain words: exit 0, a block, no error', () => {
    const dir = seed();
    const r = formatPatterns(dir, ['--query', 'C++ "foo" -bar AND (x', '--strict']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('=== HISTORICAL PATTERNS (auditor) ===');
  });

  it('a query of stop-words only changes nothing', () => {
    const dir = seed();
    expect(formatPatterns(dir, ['--query', 'what is the', '--strict']).stdout).toBe(formatPatterns(dir, ['--strict']).stdout);
  });
});
