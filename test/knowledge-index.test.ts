import { describe, it, expect } from 'vitest';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { knowledgeDb, knowledgeFollowers, knowledgeStats, recentKnowledge, searchKnowledge, type Source } from '../lib/knowledge/index.js';
import { recallTerms } from '../lib/knowledge/search.js';
import { isCommandLike, stripShellResidue } from '../lib/knowledge/noise.js';
import type { KnowledgeEntry } from '../lib/knowledge/entry.js';
import { openTestStore, tempProject } from './helpers.js';

// The knowledge index (SPEC §4.3): FTS5 with porter stemming and positive BM25 weights, safe
// queries, curation status, project scoping, incremental sync and rebuild on rewrite, the archive.

const P = 'proj';
let ts = 1_700_000_000;
function entry(type: string, content: string, extra: Partial<KnowledgeEntry> = {}): KnowledgeEntry {
  const key = `${type}-${content.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 60).replace(/^-|-$/g, '')}`;
  return { key, type, content, source: 'test', tags: [type], ts: ts++, bead: 'b-1', project: P, ...extra };
}

function setup(lines: Partial<Record<Source, KnowledgeEntry[]>>) {
  const root = tempProject();
  const store = openTestStore(root, P);
  const paths: Record<Source, string> = { log: store.knowledgePath, archive: store.archivePath, active: store.activePath };
  for (const [source, entries] of Object.entries(lines) as [Source, KnowledgeEntry[]][]) {
    mkdirSync(dirname(paths[source]), { recursive: true });
    writeFileSync(paths[source], entries.map((e) => JSON.stringify(e) + '\n').join(''));
  }
  const search = (text: string, opts: { sources?: Source[]; type?: string; limit?: number; withSuperseded?: boolean } = {}) => {
    const sources = opts.sources ?? ['log'];
    const followers = knowledgeFollowers(store);
    for (const s of sources) store.refresh(followers[s]);
    const db = store.database;
    return searchKnowledge(db, { project: P, sources, terms: recallTerms(text), type: opts.type, limit: opts.limit ?? 10, withSuperseded: opts.withSuperseded }).map((h) => h.content);
  };
  return { root, store, paths, search };
}

describe('search', () => {
  it('stems with porter: authenticate finds authentication and authenticated', () => {
    const { search } = setup({ log: [entry('learned', 'Authentication tokens expire hourly'), entry('fact', 'Users are authenticated by the proxy'), entry('fact', 'Unrelated cache note')] });
    expect(search('authenticate').sort()).toEqual(['Authentication tokens expire hourly', 'Users are authenticated by the proxy']);
  });

  it('ranks more and rarer matches in content higher (positive weights)', () => {
    const { search } = setup({
      log: [
        entry('fact', 'The sqlite index is rebuilt from the log'),
        entry('learned', 'SQLite FTS5 needs porter stemming for sqlite queries about sqlite bm25 ranking'),
        entry('fact', 'Logs rotate nightly'),
      ],
    });
    expect(search('sqlite bm25 ranking')[0]).toMatch(/^SQLite FTS5/);
  });

  it('FTS5 syntax in the query is only words: C++, -, :, quotes, *, AND, NEAR, parentheses', () => {
    const { search } = setup({ log: [entry('fact', 'C++ templates need explicit instantiation'), entry('fact', 'Plain words only')] });
    for (const q of ['C++ "templates', 'templates AND (NOT', 'content: templates*', '-templates NEAR/2 x', 'templates OR"']) {
      expect(search(q)).toEqual(['C++ templates need explicit instantiation']);
    }
    expect(search('AND OR NOT ( ) * : - "')).toEqual([]);
  });

  it('filters by type inside the query, before the limit', () => {
    const many = Array.from({ length: 12 }, (_, i) => entry('fact', `deploy step ${i} uses the deploy script deploy`));
    const { search } = setup({ log: [...many, entry('investigation', 'deploy failed once because of a stale lock')] });
    expect(search('deploy', { type: 'investigation', limit: 3 })).toEqual(['deploy failed once because of a stale lock']);
    expect(search('deploy', { limit: 3 })).toHaveLength(3);
  });

  it('sinks shell residue below real notes, but still finds it when it is all there is', () => {
    const junk = entry('learned', 'bd create --title="Fix the cache" --description="$(cat <<\'DESC\'\ncache eviction breaks\nDESC\n)"');
    const note = entry('learned', 'cache eviction runs every hour');
    const { search } = setup({ log: [junk, note] });
    expect(search('cache eviction')).toEqual([note.content, junk.content]);
    expect(search('DESC')).toEqual([junk.content]);
  });

  it('canonical wins a near-tie, needs_review is demoted, superseded is hidden unless asked for', () => {
    const a = entry('fact', 'retry the upload with backoff', { status: 'needs_review' });
    const b = entry('fact', 'retry the upload with jitter and backoff');
    const c = entry('fact', 'retry uploads: backoff doubles', { status: 'canonical' });
    const d = entry('fact', 'retry the upload forever', { status: 'superseded' });
    const { search } = setup({ log: [a, b, c, d] });
    const found = search('retry upload backoff');
    expect(found[0]).toBe(c.content);
    expect(found.indexOf(a.content)).toBe(found.length - 1);
    expect(found).not.toContain(d.content);
    expect(search('retry upload backoff', { withSuperseded: true })).toContain(d.content);
  });

  it('a later line of the same entry (curation) replaces the earlier one; a union-merged copy shows once', () => {
    const original = entry('decision', 'keep the log append-only');
    const { store, paths, search } = setup({ log: [original, original] });
    expect(search('append-only log')).toEqual([original.content]);
    appendFileSync(paths.log, JSON.stringify({ ...original, status: 'superseded', superseded_by: 'x', review_reason: 'dupe' }) + '\n');
    expect(search('append-only log')).toEqual([]);
    const db = knowledgeDb(store, ['log']);
    expect(recentKnowledge(db, { project: P, sources: ['log'], limit: 10, withSuperseded: true }).map((h) => h.status)).toEqual(['superseded']);
  });

  it("never shows another project's entries; entries without a project are the store's", () => {
    const { search } = setup({
      log: [entry('fact', 'ours: widgets are blue'), entry('fact', 'theirs: widgets are red', { project: 'other' }), entry('fact', 'legacy: widgets are green', { project: undefined })],
    });
    expect(search('widgets').sort()).toEqual(['legacy: widgets are green', 'ours: widgets are blue']);
  });

  it('searches the archive only when asked (--all), flagged as archived', () => {
    const { store, search } = setup({ log: [entry('fact', 'queue workers restart nightly')], archive: [entry('fact', 'queue workers once ran hourly')] });
    expect(search('queue workers')).toEqual(['queue workers restart nightly']);
    expect(search('queue workers', { sources: ['log', 'archive'] }).sort()).toEqual(['queue workers once ran hourly', 'queue workers restart nightly']);
    const db = knowledgeDb(store, ['log', 'archive']);
    const hits = searchKnowledge(db, { project: P, sources: ['log', 'archive'], terms: ['hourly'], limit: 5 });
    expect(hits.map((h) => h.archived)).toEqual([true]);
    expect(knowledgeStats(db, P)).toMatchObject({ total: 2, archived: 1, byType: { fact: 2 } });
  });
});

describe('sync', () => {
  it('applies appended lines incrementally and rebuilds when the log is rewritten (rotation)', () => {
    const first = entry('fact', 'alpha note about parsers');
    const { store, paths, search } = setup({ log: [first] });
    expect(search('parsers')).toHaveLength(1);
    const second = entry('fact', 'beta note about parsers');
    appendFileSync(paths.log, JSON.stringify(second) + '\n');
    expect(store.refresh(knowledgeFollowers(store).log)).toMatchObject({ applied: 1, rebuilt: false });
    expect(search('parsers')).toHaveLength(2);
    writeFileSync(paths.log, JSON.stringify(second) + '\n'); // rotated away the first
    const report = store.refresh(knowledgeFollowers(store).log);
    expect(report.rebuilt).toBe(true);
    expect(search('parsers')).toEqual([second.content]);
  });

  it('reports an unreadable line and indexes the rest', () => {
    const { store, paths } = setup({ log: [entry('fact', 'one')] });
    appendFileSync(paths.log, 'garbage\n' + JSON.stringify(JSON.stringify(entry('fact', 'two'))) + '\n');
    const report = store.refresh(knowledgeFollowers(store).log);
    expect(report).toMatchObject({ applied: 2, skipped: 1 });
  });
});

describe('noise', () => {
  it.each([
    'bd create --title="Component: Knowledge section" --description="$(cat <<\'DESC\'\nMemory system',
    'bd update bdcompound-hm0.6 -d "$(cat <<\'DESC\'\nMemory system',
    'cd /Users/rbm/Documents/projects/beads-compound-plugin && \\\ncommand-map iframe height',
    "# Test the || coverage in the trailing-operator sed\noauth works\" || handle_error' | sed -E 's/x//'",
    '## What\n\nAdd a FACT\n\n## Context\n\nAstro',
  ])('%j is command-like', (content) => {
    expect(isCommandLike(content)).toBe(true);
  });

  it.each([
    "bd show --json returns an array, not a single object. Must use jq '.[0].field' to extract fields.",
    'bd prime\'s "bd remember" instruction competes with the knowledge.jsonl convention',
    '# is a comment marker in shell and YAML',
    'git rebase rewrites history; never on shared branches',
  ])('%j is a note', (content) => {
    expect(isCommandLike(content)).toBe(false);
  });

  it('strips glued command tails, keeps the note', () => {
    expect(stripShellResidue('Plugin loading shows console.log messages." && bd close bdcompound-rm9')).toBe('Plugin loading shows console.log messages.');
    expect(stripShellResidue("tr -d arguments\" 2>/dev/null; echo \"ok")).toBe('tr -d arguments');
    expect(stripShellResidue('the handler was a redundant double-call\nbd close bdcompound-807.19')).toBe('the handler was a redundant double-call');
    expect(stripShellResidue('use "a" and "b" || fall back')).toBe('use "a" and "b" || fall back');
  });
});
