import { describe, it, expect } from 'vitest';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  BM25_WEIGHTS,
  knowledgeDb,
  knowledgeFollowers,
  knowledgeStats,
  NEWEST_LINES,
  NOISE_FACTOR,
  recentKnowledge,
  searchKnowledge,
  STATUS_FACTORS,
  type Source,
} from '../lib/knowledge/index.js';
import { ftsMatch } from '../lib/store/fts.js';
import type { Database } from '../lib/store/db.js';
import { recallTerms } from '../lib/knowledge/search.js';
import { isCommandLike, stripShellResidue } from '../lib/knowledge/noise.js';
import type { KnowledgeEntry } from '../lib/knowledge/entry.js';
import { openTestStore, tempProject } from './helpers.js';

// The knowledge index (SPEC §4.3): FTS5 with porter stemming and positive BM25 weights, safe
// queries, curation status, project scoping, incremental sync and rebuild on rewrite, the archive.

const P = 'proj';
let ts = 1_700_000_000;
function entry(type: string, content: string, extra: Partial<KnowledgeEntry> = {}): KnowledgeEntry {
  const key = `${type}-${content
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 60)
    .replace(/^-|-$/g, '')}`;
  return { key, type, content, source: 'test', tags: [type], ts: ts++, bead: 'b-1', project: P, ...extra };
}

function setup(lines: Partial<Record<Source, KnowledgeEntry[]>>) {
  const root = tempProject();
  const store = openTestStore(root, P);
  const paths: Record<Source, string> = {
    log: store.knowledgePath,
    archive: store.archivePath,
    active: store.activePath,
  };
  for (const [source, entries] of Object.entries(lines) as [Source, KnowledgeEntry[]][]) {
    mkdirSync(dirname(paths[source]), { recursive: true });
    writeFileSync(paths[source], entries.map((e) => JSON.stringify(e) + '\n').join(''));
  }
  const search = (text: string, opts: { sources?: Source[]; type?: string; limit?: number; withSuperseded?: boolean } = {}) => {
    const sources = opts.sources ?? ['log'];
    const followers = knowledgeFollowers(store);
    for (const s of sources) store.refresh(followers[s]);
    const db = store.database;
    return searchKnowledge(db, {
      project: P,
      sources,
      terms: recallTerms(text),
      type: opts.type,
      limit: opts.limit ?? 10,
      withSuperseded: opts.withSuperseded,
    }).map((h) => h.content);
  };
  return { root, store, paths, search };
}

describe('search', () => {
  it('stems with porter: authenticate finds authentication and authenticated', () => {
    const { search } = setup({
      log: [
        entry('learned', 'Authentication tokens expire hourly'),
        entry('fact', 'Users are authenticated by the proxy'),
        entry('fact', 'Unrelated cache note'),
      ],
    });
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
    const { search } = setup({
      log: [entry('fact', 'C++ templates need explicit instantiation'), entry('fact', 'Plain words only')],
    });
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
    expect(recentKnowledge(db, { project: P, sources: ['log'], limit: 10, withSuperseded: true }).map((h) => h.status)).toEqual([
      'superseded',
    ]);
  });

  it("never shows another project's entries; entries without a project are the store's", () => {
    const { search } = setup({
      log: [
        entry('fact', 'ours: widgets are blue'),
        entry('fact', 'theirs: widgets are red', { project: 'other' }),
        entry('fact', 'legacy: widgets are green', { project: undefined }),
      ],
    });
    expect(search('widgets').sort()).toEqual(['legacy: widgets are green', 'ours: widgets are blue']);
  });

  it('searches the archive only when asked (--all), flagged as archived', () => {
    const { store, search } = setup({
      log: [entry('fact', 'queue workers restart nightly')],
      archive: [entry('fact', 'queue workers once ran hourly')],
    });
    expect(search('queue workers')).toEqual(['queue workers restart nightly']);
    expect(search('queue workers', { sources: ['log', 'archive'] }).sort()).toEqual([
      'queue workers once ran hourly',
      'queue workers restart nightly',
    ]);
    const db = knowledgeDb(store, ['log', 'archive']);
    const hits = searchKnowledge(db, { project: P, sources: ['log', 'archive'], terms: ['hourly'], limit: 5 });
    expect(hits.map((h) => h.archived)).toEqual([true]);
    expect(knowledgeStats(db, P)).toMatchObject({ total: 2, archived: 1, byType: { fact: 2 } });
  });
});

describe('exact ranking with bounded work', () => {
  // The reference: every matching row scored and sorted in SQL, as the index did before it pruned.
  function reference(db: Database, q: { terms: string[]; limit: number; sources: Source[]; type?: string; withSuperseded?: boolean }) {
    const codes = q.sources.map((s) => ({ archive: 0, log: 1, active: 2 })[s]);
    const status = Object.entries(STATUS_FACTORS)
      .map(([s, f]) => `WHEN '${s}' THEN ${f}`)
      .join(' ');
    return db
      .prepare(
        `SELECT k.id, -bm25(knowledge_fts, ${BM25_WEIGHTS.join(', ')}) * (CASE WHEN k.noise = 1 THEN ${NOISE_FACTOR} ELSE 1.0 END) * (CASE k.status ${status} ELSE 1.0 END) AS score
         FROM knowledge_fts JOIN knowledge k ON k.id = knowledge_fts.rowid
         WHERE knowledge_fts MATCH ? AND k.project IN (?, '') AND k.source IN (${codes.join(', ')})
           AND NOT EXISTS (SELECT 1 FROM knowledge later WHERE later.version = k.version AND later.seq > k.seq AND (later.source = 2) = (k.source = 2))
           ${q.type ? `AND k.type = '${q.type}'` : ''} ${q.withSuperseded ? '' : `AND (k.status IS NULL OR k.status != 'superseded')`}
         ORDER BY score DESC, k.ts DESC, k.seq DESC LIMIT ?`,
      )
      .all(ftsMatch(q.terms), P, q.limit) as { id: number; score: number }[];
  }

  it('leaves out a common word only when no row holding just that word can reach the top k', () => {
    // 'zebra' is rarer, so it is scored first; its rows are very long, so they score low. The shortest
    // 'cache' rows (2,100 of 10,000) score above them: 'cache' may not be ruled out, though it is common.
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 50}`).join(' ');
    const lines = [
      ...Array.from({ length: 7600 }, (_, i) => entry('fact', `other note ${i}`)),
      ...Array.from({ length: 2100 }, (_, i) => entry('fact', i < 5 ? `cache cache cache ${i}` : `cache with ${filler(3)} ${i}`)),
      ...Array.from({ length: 300 }, (_, i) => entry('fact', `${filler(600)} zebra ${i}`)),
    ];
    const { store } = setup({ log: lines });
    const db = knowledgeDb(store, ['log']);
    const q = { terms: ['zebra', 'cache'], limit: 3, sources: ['log'] as Source[] };
    const found = searchKnowledge(db, { project: P, ...q });
    expect(found.map((h) => ({ id: h.id, score: h.score }))).toEqual(reference(db, q));
    expect(found[0].content).toMatch(/^cache cache cache/);
  });

  it('a canonical entry whose raw score is just below the k-th still enters the top k (the walk allows for the largest factor)', () => {
    const same = Array.from({ length: 8 }, (_, i) => entry('fact', `deploy cache step ${i}`));
    const canonical = entry('fact', 'deploy cache step with one more word', { status: 'canonical' });
    const { search } = setup({ log: [canonical, ...same] });
    expect(search('deploy cache', { limit: 3 })[0]).toBe(canonical.content);
  });

  it('finds the same entries in the same order, with the same scores, as scoring every matching row', () => {
    // a seeded log where some words are everywhere and some are rare, with every kind of line the ranking weighs
    let seed = 11;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const common = ['cache', 'deploy', 'config', 'test', 'hook'];
    const rare = Array.from({ length: 40 }, (_, i) => `term${i}`);
    const statuses = [undefined, undefined, undefined, 'canonical', 'needs_review', 'superseded'] as const;
    const types = ['learned', 'fact', 'decision', 'investigation'];
    const lines: KnowledgeEntry[] = [];
    for (let i = 0; i < 1500; i++) {
      const words = Array.from({ length: 3 + rnd(12) }, () => (rnd(3) === 0 ? rare[rnd(rare.length)] : common[rnd(common.length)]));
      const content = rnd(15) === 0 ? `bd update x-${i} -d "${words.join(' ')}"` : `${words.join(' ')} note ${i}`;
      const e = entry(types[rnd(types.length)], content, {
        status: statuses[rnd(statuses.length)],
        project: rnd(10) === 0 ? 'other' : rnd(10) === 0 ? undefined : P,
      });
      lines.push(e);
      if (rnd(20) === 0) lines.push({ ...e, status: 'superseded' }); // a curation line for the same entry
    }
    const { store } = setup({ log: lines.slice(300), archive: lines.slice(0, 300) });
    const db = knowledgeDb(store, ['log', 'archive']);
    let compared = 0;
    const queries = [
      'cache deploy',
      'term1 cache',
      'term2 term3 term4 config test hook deploy cache',
      'term39',
      'hook',
      'note cache term7 term8',
      'nothing here',
    ];
    for (let i = 0; i < 40; i++)
      queries.push(
        Array.from({ length: 1 + rnd(6) }, () => (rnd(2) === 0 ? rare[rnd(rare.length)] : common[rnd(common.length)])).join(' '),
      );
    for (const text of queries) {
      for (const limit of [1, 3, 10, 40]) {
        for (const opts of [
          { sources: ['log'] as Source[] },
          { sources: ['log', 'archive'] as Source[], withSuperseded: true },
          { sources: ['log'] as Source[], type: 'investigation' },
        ]) {
          const q = { terms: recallTerms(text), limit, ...opts };
          const found = searchKnowledge(db, { project: P, ...q }).map((h) => ({ id: h.id, score: h.score }));
          expect(found, `${text} / ${limit} / ${JSON.stringify(opts)}`).toEqual(reference(db, q));
          compared += found.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(3000);
  });
});

describe("the newest lines (auto-recall's working set)", () => {
  const newestIds = (db: Database, source: number) =>
    db.prepare('SELECT id FROM knowledge_newest WHERE source = ? ORDER BY id').pluck().all(source);
  const expectedIds = (db: Database, source: number) =>
    db
      .prepare('SELECT id FROM (SELECT id FROM knowledge WHERE source = ? ORDER BY id DESC LIMIT ?) ORDER BY id')
      .pluck()
      .all(source, NEWEST_LINES);
  const indexed = (db: Database, term: string) =>
    db.prepare('SELECT count(*) FROM knowledge_newest_fts WHERE knowledge_newest_fts MATCH ?').pluck().get(`"${term}"`);

  it('holds exactly the newest lines of the log through appends and a rewrite; auto-recall searches only them, recall every line', () => {
    const old = entry('fact', 'the oldest note mentions zeppelins');
    const filler = Array.from({ length: NEWEST_LINES }, (_, i) => entry('fact', `filler note ${i} about parsers`));
    const { store, paths } = setup({ log: [old, ...filler] });
    const db = knowledgeDb(store, ['log'], { newest: true });
    expect(newestIds(db, 1)).toEqual(expectedIds(db, 1));
    expect(indexed(db, 'zeppelins')).toBe(0);
    const q = { project: P, sources: ['log'] as Source[], terms: ['zeppelins'], limit: 5 };
    expect(searchKnowledge(db, { ...q, newest: true })).toEqual([]);
    expect(searchKnowledge(db, q).map((h) => h.content)).toEqual([old.content]);

    const sync = () => {
      store.refresh(knowledgeFollowers(store).log); // a later process: the log is followed again
      knowledgeDb(store, ['log'], { newest: true });
    };
    appendFileSync(
      paths.log,
      [entry('fact', 'a new note about zeppelins'), entry('fact', 'another new note')].map((e) => JSON.stringify(e) + '\n').join(''),
    );
    sync();
    expect(newestIds(db, 1)).toEqual(expectedIds(db, 1));
    expect(indexed(db, 'parsers')).toBe(NEWEST_LINES - 2);
    expect(searchKnowledge(db, { ...q, newest: true }).map((h) => h.content)).toEqual(['a new note about zeppelins']);

    writeFileSync(paths.log, [old, ...filler.slice(0, 10)].map((e) => JSON.stringify(e) + '\n').join('')); // rewritten: rebuilt
    sync();
    expect(newestIds(db, 1)).toEqual(expectedIds(db, 1));
    expect(newestIds(db, 1)).toHaveLength(11);
    expect(indexed(db, 'zeppelins')).toBe(1);
    expect(indexed(db, 'parsers')).toBe(10);
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
    "bd update bdcompound-hm0.6 -d \"$(cat <<'DESC'\nMemory system",
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
    expect(stripShellResidue('Plugin loading shows console.log messages." && bd close bdcompound-rm9')).toBe(
      'Plugin loading shows console.log messages.',
    );
    expect(stripShellResidue('tr -d arguments" 2>/dev/null; echo "ok')).toBe('tr -d arguments');
    expect(stripShellResidue('the handler was a redundant double-call\nbd close bdcompound-807.19')).toBe(
      'the handler was a redundant double-call',
    );
    expect(stripShellResidue('use "a" and "b" || fall back')).toBe('use "a" and "b" || fall back');
  });
});
