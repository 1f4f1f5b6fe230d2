import { describe, it, expect } from 'vitest';
import { observedPatterns, openTestStore, run, seededRandom, tempProject } from './helpers.js';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { TermIndex } from '../lib/patterns/index/terms.js';
import { ScanLookups } from '../lib/patterns/index/scan.js';
import { bm25Query, matchesSql, queryTermsSql } from '../lib/patterns/index/weights.js';
import { matchIn, queryMatches } from '../lib/patterns/index/ranking.js';
import { bm25Relevance, packPostingLists, roleLookups } from '../lib/patterns/index/index.js';
import { IndexCatchingUp } from '../lib/core/errors.js';
import { NEAR_DUPLICATE } from '../lib/patterns/identity.js';
import { contentTerms, indexTerms } from '../lib/core/text.js';

/** The content terms a near-duplicate lookup compares (lib/patterns/identity.ts), and their Jaccard similarity. */
const termSet = (text: string) => new Set(indexTerms(text).terms);
function jaccard(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}
import { patternId } from '../lib/core/ids.js';
import { patternDb } from '../lib/events/log.js';
import { addTerms } from '../lib/events/reducer.js';
import type { Database } from '../lib/store/db.js';
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

// The term index (lib/patterns/index/terms.ts) finds near-duplicates by prefix filtering and counts
// words from samples: it must answer as the scan does (lib/patterns/index/scan.ts, which compares the
// text with every pattern of the role), whatever the words' frequencies.

// A small vocabulary with words that share a stem (document/documents/documented, retry/retries),
// stop-words (which the index leaves out), a word that stems as a stop-word does (others → oth, as
// other), and a few rare words, so that texts overlap heavily as a real role's patterns do.
const WORDS = (
  'the a in of to must be before other others after during document documents documented documentation retry retries retried token tokens session ' +
  'migration index rollback refund invoice webhook timeout tenant cursor ledger cookie schema flag test plan endpoint ' +
  'export status cli api merge release'
).split(' ');
const RARE = 'openapi pagination idempotency backfill'.split(' ');

/** A new project's pattern database (project p1), and where it lives. */
function projectDb(): { root: string; db: Database } {
  const root = tempProject();
  return { root, db: patternDb(openTestStore(root, 'p1')) };
}

function insertPatterns(db: Database, project: string, role: string, texts: string[]): void {
  const exists = db.prepare('SELECT 1 FROM patterns WHERE project = ? AND id = ?');
  const insert = db.prepare(`INSERT INTO patterns (project, id, role, text, ntok, category, first_seen, last_used, term_seq)
    VALUES (?, ?, ?, ?, ?, 'rule', '2026-01-01', 0, ?)`);
  db.transaction(() => {
    for (const text of texts) {
      const id = patternId(project, role, text);
      if (exists.get(project, id)) continue;
      const { terms, length } = indexTerms(text);
      insert.run(project, id, role, text, length, addTerms(db, project, role, id, terms, length));
    }
  })();
}

function randomTexts(count: number, seed: number): string[] {
  const rnd = seededRandom(seed);
  const pick = (xs: string[]) => xs[Math.floor(rnd() * xs.length)];
  return Array.from({ length: count }, () =>
    Array.from({ length: 2 + Math.floor(rnd() * 14) }, () => (rnd() < 0.05 ? pick(RARE) : pick(WORDS))).join(' '),
  );
}

/** A text with one to three of its words swapped, dropped or added: often a near-duplicate, sometimes not. */
function variant(text: string, rnd: () => number): string {
  const words = text.split(' ');
  for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
    const at = Math.floor(rnd() * words.length);
    const r = rnd();
    if (r < 0.33) words.splice(at, 1);
    else if (r < 0.66) words.splice(at, 0, WORDS[Math.floor(rnd() * WORDS.length)]);
    else words[at] = WORDS[Math.floor(rnd() * WORDS.length)];
  }
  return words.join(' ') || 'token';
}

describe('TermIndex.nearDuplicates', () => {
  it('finds every pattern of the role a full comparison of content terms finds (Jaccard ≥ 0.8), and none of another role or project or of a size that rules it out', () => {
    const { db } = projectDb();
    const stored = randomTexts(1500, 5);
    insertPatterns(db, 'p1', 'auditor', stored);
    insertPatterns(db, 'p1', 'judge', stored.slice(0, 300));
    insertPatterns(db, 'p2', 'auditor', stored.slice(0, 300));
    const rnd = seededRandom(9);
    const probes = [...stored.slice(0, 400).map((t) => variant(t, rnd)), ...randomTexts(200, 13)];
    const scan = new ScanLookups(db, 'p1', 'auditor'); // the full comparison: every pattern of the role, one by one
    let expectedTotal = 0;
    const sizes = new Map(stored.map((t) => [patternId('p1', 'auditor', t), termSet(t).size]));
    const reused = new TermIndex(db, 'p1', 'auditor'); // one command's lookups share the posting lists they read
    for (const probe of probes) {
      const tokens = termSet(probe);
      const expected = scan.nearDuplicates(probe, NEAR_DUPLICATE).map((r) => r.id);
      for (const index of [new TermIndex(db, 'p1', 'auditor'), reused]) {
        const candidates = index.nearDuplicates(probe, NEAR_DUPLICATE);
        const found = new Set(candidates.map((r) => r.id));
        for (const id of expected) expect(found.has(id), `${probe} → ${id}`).toBe(true);
        // m terms and n share at most min(m, n): Jaccard ≥ 0.8 needs m within [0.8·n, n / 0.8]
        for (const id of found)
          expect(sizes.get(id)! / tokens.size, `${probe} → ${id}`).toSatisfy(
            (r: number) => r >= NEAR_DUPLICATE - 1e-9 && r <= 1 / NEAR_DUPLICATE + 1e-9,
          );
        // and what the caller keeps of them is exactly what the scan finds
        expect(
          candidates.filter((r) => jaccard(tokens, termSet(r.text)) >= NEAR_DUPLICATE).map((r) => r.id),
          probe,
        ).toEqual(expected);
      }
      expectedTotal += expected.length;
    }
    expect(expectedTotal).toBeGreaterThan(100); // the probes do have near-duplicates to find
  });

  it('compares texts by their content terms: function words make two wordings neither differ nor alike (SPEC §3.10.4)', () => {
    const { db } = projectDb();
    const stored = [
      'it must be in the plan before the merge',
      'others must be in the plan before merge',
      'it is not in the plan after all',
      'all of them are in it',
    ];
    insertPatterns(db, 'p1', 'auditor', [...stored, ...randomTexts(300, 31)]);
    const index = new TermIndex(db, 'p1', 'auditor');
    const found = (probe: string) => index.nearDuplicates(probe, NEAR_DUPLICATE).map((r) => r.text);
    expect(found('every plan should be in there before a merge')).toEqual(
      expect.arrayContaining(['it must be in the plan before the merge']),
    );
    expect(found('the plan is not in it after all')).toEqual(expect.arrayContaining(['it is not in the plan after all']));
    // function words only: nothing indexed, and no other text's duplicate
    expect(indexTerms('all of them are in it').terms).toEqual([]);
    expect(found('all of them are in it')).toEqual([]);
    expect(found('it is all in them')).toEqual([]);
    expect(indexTerms('others must be in the plan before merge').terms.sort()).toEqual(['merg', 'oth', 'plan']);
  });

  it('finds them whatever its frequency estimates say (they only order the words read)', () => {
    const { db } = projectDb();
    insertPatterns(db, 'p1', 'auditor', randomTexts(300, 21));
    const index = new TermIndex(db, 'p1', 'auditor');
    const probe = 'the openapi schema of the export endpoint must be documented before merge';
    expect(index.nearDuplicates(probe, NEAR_DUPLICATE).map((r) => r.text)).not.toContain(probe);
    // the role grows under the same index: its estimates are stale, a rare word is now common
    insertPatterns(db, 'p1', 'auditor', [probe, ...Array.from({ length: 200 }, (_, i) => `openapi schema export ${i}`)]);
    expect(index.nearDuplicates(probe, NEAR_DUPLICATE).map((r) => r.text)).toContain(probe);
    const reworded = 'every openapi schema of an export endpoint should be documented before the merge';
    expect(jaccard(termSet(reworded), termSet(probe))).toBeGreaterThanOrEqual(NEAR_DUPLICATE);
    expect(index.nearDuplicates(reworded, NEAR_DUPLICATE).map((r) => r.text)).toContain(probe);
    expect(new TermIndex(db, 'p1', 'auditor').nearDuplicates(reworded, NEAR_DUPLICATE).map((r) => r.text)).toContain(probe);
  });
});

describe('TermIndex.size', () => {
  it('counts a role exactly up to 16,384 patterns, and estimates a larger one from a sample of ids within a few per cent', () => {
    const { db } = projectDb();
    const texts = Array.from({ length: 20_000 }, (_, i) => `${randomTexts(1, i)[0]} case ${i}`);
    insertPatterns(db, 'p1', 'auditor', texts);
    insertPatterns(db, 'p1', 'judge', texts.slice(0, 700));
    const exact = (role: string) =>
      db.prepare('SELECT COUNT(*) AS n, AVG(ntok) AS mean FROM patterns WHERE project = ? AND role = ?').get('p1', role) as {
        n: number;
        mean: number;
      };
    const judge = new TermIndex(db, 'p1', 'judge').size();
    expect(judge.patterns).toBe(700);
    expect(judge.meanLength).toBeCloseTo(exact('judge').mean, 9);
    const auditor = new TermIndex(db, 'p1', 'auditor').size();
    const truth = exact('auditor');
    expect(truth.n).toBeGreaterThan(16_384);
    expect(Math.abs(auditor.patterns / truth.n - 1)).toBeLessThan(0.1);
    expect(Math.abs(auditor.meanLength / truth.mean - 1)).toBeLessThan(0.05);
  });
});

describe('TermIndex.weights', () => {
  it("weighs a term ln(1 + the role's patterns / those holding it), the same however often and in whatever order it is asked", () => {
    const { root, db } = projectDb();
    const texts = randomTexts(400, 7);
    insertPatterns(db, 'p1', 'auditor', texts);
    const index = new TermIndex(db, 'p1', 'auditor');
    const terms = [...new Set(texts.flatMap((t) => indexTerms(t).terms))];
    const patterns = index.size().patterns;
    const expected = new Map(terms.map((t) => [t, Math.log(1 + patterns / Math.max(1, index.documentFrequency([t]).get(t)!))]));
    const first = index.weights(texts.slice(0, 5));
    const asked = [...terms, ...[...terms].reverse(), ...terms];
    for (const t of asked) expect(first(t)).toBe(expected.get(t));
    const second = new TermIndex(db, 'p1', 'auditor').weights([]);
    for (const t of [...terms].reverse()) expect(second(t)).toBe(expected.get(t));
    // a rare word says more than a common one
    expect(first('openapi')).toBeGreaterThan(first('token'));
    rmSync(root, { recursive: true, force: true });
  });
});

describe('the term index against the scan (fast ≡ scan, over random roles)', () => {
  /** Texts of 4 to 15 words from `vocabulary` made-up words: with many, every word is held by a few patterns. */
  function madeUpTexts(count: number, vocabulary: number, seed: number): string[] {
    const rnd = seededRandom(seed);
    const syllables = 'ka ze mo ri tu pe lo vi na sor bel dim'.split(' ');
    const words = Array.from(
      { length: vocabulary },
      (_, i) => `${syllables[i % 12]}${syllables[Math.floor(i / 12) % 12]}${syllables[Math.floor(i / 144) % 12]}q`,
    );
    return Array.from({ length: count }, () =>
      Array.from({ length: 4 + Math.floor(rnd() * 12) }, () => words[Math.floor(rnd() * words.length)]).join(' '),
    );
  }
  const roles = [
    {
      name: 'a common vocabulary (words held by hundreds of patterns)',
      texts: (seed: number) => randomTexts(1200, seed),
      wide: false,
    },
    {
      name: 'a wide vocabulary (every word held by fewer than 64 patterns)',
      texts: (seed: number) => madeUpTexts(1200, 1700, seed),
      wide: true,
    },
  ];

  it.each(roles)('counts, weighs, shares and finds near-duplicates as the scan does: $name', ({ texts, wide }) => {
    for (const seed of [61]) {
      const { db } = projectDb();
      const stored = texts(seed);
      // another role moves nothing (added first: the estimates sample the rows added last)
      insertPatterns(db, 'p1', 'judge', texts(seed + 10).slice(0, 200));
      insertPatterns(db, 'p1', 'auditor', stored);
      const fast = new TermIndex(db, 'p1', 'auditor');
      const scan = new ScanLookups(db, 'p1', 'auditor');
      expect(fast.size()).toEqual(scan.size()); // a role under 16,384 patterns is counted exactly
      const terms = [...new Set(stored.flatMap((t) => indexTerms(t).terms))];
      const [estimated, counted] = [fast.documentFrequency(terms), scan.documentFrequency(terms)];
      const exactly = terms.filter((t) => counted.get(t)! < 64);
      expect(exactly.length === terms.length).toBe(wide);
      // a word held by fewer than 64 patterns is counted exactly; a common one estimated from a sample, within a factor 2
      for (const t of exactly) expect(estimated.get(t), t).toBe(counted.get(t));
      for (const t of terms) expect(estimated.get(t)! / counted.get(t)!, t).toSatisfy((r: number) => r >= 0.5 && r <= 2);
      const [fastWeight, scanWeight] = [fast.weights(stored.slice(0, 5)), scan.weights([])];
      for (const t of exactly) expect(fastWeight(t), t).toBe(scanWeight(t));
      const rnd = seededRandom(seed + 1);
      const probes = [...stored.slice(0, 150).map((t) => variant(t, rnd)), ...texts(seed + 2).slice(0, 50)];
      for (const probe of probes) {
        const alike = fast.nearDuplicates(probe, NEAR_DUPLICATE).filter((r) => jaccard(termSet(probe), termSet(r.text)) >= NEAR_DUPLICATE);
        expect(alike, probe).toEqual(scan.nearDuplicates(probe, NEAR_DUPLICATE));
        // where the rarest words of the text are counted exactly, the same patterns share them, in the same order
        const rare = [...contentTerms(probe).keys()].every((t) => (counted.get(t) ?? 0) < 64);
        if (rare) expect(fast.sharing(probe, 20), probe).toEqual(scan.sharing(probe, 20));
      }
    }
  });

  it('while the term index is being built, a small store is scanned, and a large one fails open as catching up', () => {
    const { db } = projectDb();
    const stored = randomTexts(300, 71);
    insertPatterns(db, 'p1', 'auditor', stored);
    const probe = variant(stored[0], seededRandom(72));
    const built = roleLookups(db, 'p1', 'auditor');
    expect(built).toBeInstanceOf(TermIndex);
    db.exec('DROP INDEX pattern_terms_key'); // as a first replay leaves it until its end
    const scanned = roleLookups(db, 'p1', 'auditor');
    expect(scanned).toBeInstanceOf(ScanLookups);
    const alike = (rows: { id: string; text: string }[]) => rows.filter((r) => jaccard(termSet(probe), termSet(r.text)) >= NEAR_DUPLICATE);
    expect(alike(scanned.nearDuplicates(probe, NEAR_DUPLICATE))).toEqual(alike(built.nearDuplicates(probe, NEAR_DUPLICATE)));
    expect(alike(scanned.nearDuplicates(probe, NEAR_DUPLICATE)).length).toBeGreaterThan(0);
    // another project's rows make the store too large to read whole
    insertPatterns(db, 'p2', 'auditor', randomTexts(700, 73));
    expect(() => roleLookups(db, 'p1', 'auditor')).toThrow(IndexCatchingUp);
    expect(bm25Relevance(db, 'p1', ['auditor'], 'refund webhook retry')).toBeUndefined(); // a block ranks without relevance meanwhile
  });
});

describe('packed posting lists (pattern_postings)', () => {
  const PROBES = (stored: string[], seed: number) => {
    const rnd = seededRandom(seed);
    return [...stored.slice(0, 150).map((t) => variant(t, rnd)), ...randomTexts(50, seed + 1)];
  };
  // what a writer takes from a lookup: the candidates whose terms are near enough (which candidates a
  // lookup returns beyond them depends on which lists it found cheap to read)
  const lookups = (index: TermIndex, probes: string[]) =>
    probes.map((p) =>
      index
        .nearDuplicates(p, NEAR_DUPLICATE)
        .filter((r) => jaccard(termSet(p), termSet(r.text)) >= NEAR_DUPLICATE)
        .map((r) => r.id),
    );
  const packedCount = (db: Database) => (db.prepare('SELECT COUNT(*) AS n FROM pattern_postings').get() as { n: number }).n;
  /** The lookups as the index alone answers them: no list packed. */
  function fromRows(db: Database, probes: string[]): string[][] {
    db.exec('SAVEPOINT rows_only; DELETE FROM pattern_postings');
    try {
      return lookups(new TermIndex(db, 'p1', 'auditor'), probes);
    } finally {
      db.exec('ROLLBACK TO rows_only; RELEASE rows_only');
    }
  }

  it("`cairn rebuild --continue` (a fresh clone's background finisher) packs the long lists, once", () => {
    const root = tempProject();
    const texts = [...new Set(randomTexts(700, 41).map((t) => `refund ${t}`))];
    observedPatterns(root, texts, true); // a fresh clone: the log alone
    const db = join(root, '.cairn', 'cache', 'state.db');
    const finish = () => run('cairn', ['rebuild', '--continue', '--project', 'p1', '--json', '--strict'], { cwd: root });
    const first = finish();
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ applied: texts.length, packed: expect.any(Number) });
    const packed = JSON.parse(first.stdout).packed as number;
    expect(packed).toBeGreaterThan(0); // 'refund' at least: every pattern holds it
    const file = new BetterSqlite3(db, { readonly: true });
    expect(packedCount(file)).toBe(packed);
    file.close();
    expect(JSON.parse(finish().stdout)).toMatchObject({ applied: 0, packed: 0 }); // kept already
  });

  /** A project whose log holds `count` patterns of `words` distinct words each (a term row per word), of `vocabulary` made-up words. */
  function loggedPatterns(count: number, words: number, vocabularySize: number, seed: number): string {
    const root = tempProject();
    const rnd = seededRandom(seed);
    const syllables = 'ka ze mo ri tu pe lo vi na sor bel dim'.split(' ');
    const vocabulary = [
      ...new Set(
        Array.from({ length: 4 * vocabularySize }, () =>
          Array.from({ length: 3 }, () => syllables[Math.floor(rnd() * syllables.length)]).join(''),
        ),
      ),
    ].slice(0, vocabularySize);
    const texts = Array.from({ length: count }, () => {
      const chosen = new Set<string>();
      while (chosen.size < words) chosen.add(vocabulary[Math.floor(rnd() * vocabulary.length)]);
      return [...chosen].join(' ');
    });
    observedPatterns(root, texts);
    return root;
  }
  const rebuild = (root: string) => {
    const r = run('cairn', ['rebuild', '--project', 'p1', '--json', '--strict'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { applied: number; packed: number };
  };
  const packedIn = (root: string) => {
    const file = new BetterSqlite3(join(root, '.cairn', 'cache', 'state.db'), { readonly: true });
    try {
      return packedCount(file);
    } finally {
      file.close();
    }
  };

  it('`cairn rebuild` empties them and packs them again at once, for a small index', () => {
    const root = loggedPatterns(700, 12, 24, 51); // 8,400 term rows, ~350 a word
    const first = rebuild(root);
    expect(first).toMatchObject({ applied: 700, packed: expect.any(Number) });
    expect(first.packed).toBeGreaterThan(0);
    expect(packedIn(root)).toBe(first.packed);
    expect(rebuild(root).packed).toBe(first.packed); // emptied by the replay, packed again
    rmSync(root, { recursive: true, force: true });
  });

  it('`cairn rebuild` of a large index leaves the packing to a cairn rebuild --continue in the background', async () => {
    const root = loggedPatterns(3_500, 30, 150, 52); // 105,000 term rows (past what a hook's replay finishes itself), ~700 a word
    expect(rebuild(root)).toMatchObject({ applied: 3_500, packed: 0 });
    const background = () => spawnSync('pgrep', ['-f', `rebuild --continue --quiet --root ${root}`]).status === 0;
    for (const started = Date.now(); background() && Date.now() - started < 60_000; ) await new Promise((r) => setTimeout(r, 100));
    expect(background()).toBe(false);
    // what `cairn maintain` would pack: every long list, each the index's own
    const packed = packedIn(root);
    expect(packed).toBe(150);
    const maintain = run('cairn', ['maintain', '--project', 'p1', '--json', '--strict'], { cwd: root });
    expect(maintain.code, maintain.stderr).toBe(0);
    expect(JSON.parse(maintain.stdout).packed).toBe(0);
    rmSync(root, { recursive: true, force: true });
  }, 90_000);

  /** 1,500 patterns, and a writer's lookups that packed the lists they read (as store-deliberation does after recording its run). */
  function packedByAWriter(seed: number) {
    const db = patternDb(openTestStore(tempProject(), 'p1'));
    const stored = randomTexts(1500, seed);
    insertPatterns(db, 'p1', 'auditor', stored);
    const probes = PROBES(stored, seed + 2);
    const expected = fromRows(db, probes);
    const writer = new TermIndex(db, 'p1', 'auditor');
    const found = lookups(writer, probes);
    writer.packWhatWasRead();
    return { db, probes, expected, found };
  }

  it('gives every lookup the same near-duplicates packed, packed and grown since, or read from the index', () => {
    const { db, probes, expected, found } = packedByAWriter(31);
    expect(expected.flat().length).toBeGreaterThan(30);
    expect(found).toEqual(expected);
    expect(packedCount(db)).toBeGreaterThan(5);
    expect(lookups(new TermIndex(db, 'p1', 'auditor'), probes)).toEqual(expected);

    // patterns added since: the packed lists plus the postings added after them
    const through = () =>
      new Map(
        (db.prepare('SELECT term, through FROM pattern_postings').all() as { term: string; through: number }[]).map((r) => [
          r.term,
          r.through,
        ]),
      );
    const before = through();
    insertPatterns(db, 'p1', 'auditor', randomTexts(40, 35));
    expect(lookups(new TermIndex(db, 'p1', 'auditor'), probes)).toEqual(fromRows(db, probes));
    // many more: the lists grown by more than a quarter are packed again by the next writer
    insertPatterns(db, 'p1', 'auditor', randomTexts(1500, 37));
    const grown = fromRows(db, probes);
    const next = new TermIndex(db, 'p1', 'auditor');
    expect(lookups(next, probes)).toEqual(grown);
    next.packWhatWasRead();
    const after = through();
    expect([...before].some(([term, seq]) => after.get(term)! > seq)).toBe(true);
    expect(lookups(new TermIndex(db, 'p1', 'auditor'), probes)).toEqual(grown);
  });

  it('ignores a packed list whose last posting the index no longer holds as it was (a replay numbered them anew)', () => {
    const { db, probes, expected } = packedByAWriter(41);
    expect(packedCount(db)).toBeGreaterThan(5);
    // every packed list now claims no pattern at all
    db.prepare("UPDATE pattern_postings SET last = 'p-replayed-away', postings = zeroblob(length(postings))").run();
    expect(lookups(new TermIndex(db, 'p1', 'auditor'), probes)).toEqual(expected);
  });

  it('cairn maintain packs every long list once (packPostingLists), and a writer never waits for the lock to pack', () => {
    const { root, db } = projectDb();
    insertPatterns(db, 'p1', 'auditor', randomTexts(1500, 51));
    insertPatterns(db, 'p1', 'judge', randomTexts(100, 53)); // lists too short to pack
    const long = (
      db
        .prepare("SELECT COUNT(*) AS n FROM (SELECT 1 FROM pattern_terms WHERE project = 'p1' GROUP BY role, term HAVING COUNT(*) >= 256)")
        .get() as { n: number }
    ).n;
    expect(long).toBeGreaterThan(5);
    expect(packPostingLists(db, 'p1')).toBe(long);
    expect(packedCount(db)).toBe(long);
    expect(packPostingLists(db, 'p1')).toBe(0); // nothing stale

    db.exec('DELETE FROM pattern_postings');
    const other = new BetterSqlite3(join(root, '.cairn', 'cache', 'state.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const writer = new TermIndex(db, 'p1', 'auditor');
      lookups(writer, randomTexts(20, 55));
      const patience = db.pragma('busy_timeout', { simple: true });
      const started = Date.now();
      writer.packWhatWasRead();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(patience);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(packedCount(db)).toBe(0);
  });
});

describe('queryMatches (a query’s matches summed from the posting lists)', () => {
  /** Each match's BM25 by pattern id, as the walk's lists give it and as matchesSql computes it. */
  function bothWays(db: Database, roles: string[], query: string) {
    const q = bm25Query(
      roles.map((role) => new TermIndex(db, 'p1', role)),
      query,
    )!;
    const matches = queryMatches(db, 'p1', roles, q);
    // a match's pattern is the one whose postings start at its seq
    const idOf = db.prepare('SELECT id FROM patterns WHERE project = ? AND role = ? AND term_seq = ?').pluck();
    const fromLists = new Map<string, number>();
    matches.seqs.forEach((seq, i) => {
      const r = roles.findIndex((_, k) => i < matches.starts[k + 1]);
      fromLists.set(idOf.get('p1', roles[r], seq) as string, matches.bm[i]);
      expect(matchIn(matches, r, seq)).toBe(i);
    });
    expect(matchIn(matches, 0, Math.max(...matches.seqs) + 1)).toBe(-1); // no pattern there
    const params: Record<string, unknown> = {};
    const rows = db.prepare(`WITH ${queryTermsSql(q, params)} ${matchesSql('p1', roles, params)}`).all(params) as {
      id: string;
      bm: number;
    }[];
    return { fromLists, fromSql: new Map(rows.map((r) => [r.id, r.bm])) };
  }

  it('gives every match the very BM25 SQL computes, with its lists packed or read from the index, over several roles', () => {
    const db = patternDb(openTestStore(tempProject(), 'p1'));
    insertPatterns(db, 'p1', 'auditor', randomTexts(1200, 7));
    insertPatterns(db, 'p1', 'judge', randomTexts(300, 8));
    for (const packed of [false, true]) {
      if (packed) expect(packPostingLists(db, 'p1')).toBeGreaterThan(0);
      for (const query of ['refund webhook retry', 'document the retries of a tenant cursor', 'openapi pagination']) {
        const { fromLists, fromSql } = bothWays(db, ['auditor', 'judge'], query);
        expect(fromLists.size, query).toBeGreaterThan(0);
        expect(fromLists, `${query}, packed: ${packed}`).toEqual(fromSql); // exact numbers: toEqual compares with Object.is
      }
    }
  });
});
