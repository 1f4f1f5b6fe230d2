import { describe, it, expect } from 'vitest';
import { openTestStore, seededRandom, tempProject } from './helpers.js';
import {
  bm25Relevance,
  candidateDigest,
  newCandidateSince,
  rankByScan,
  rankScores,
  type RankOptions,
} from '../lib/patterns/index/index.js';
import { idBits } from '../lib/core/ids.js';
import type { ScoreContext } from '../lib/patterns/scoring.js';
import { rankKey } from '../lib/patterns/index/ranking.js';
import { DECAYING_KEY_SQL, DECAYING_SQL, IMMUNE_KEY_SQL } from '../lib/store/rank-keys.js';
import { indexTerms } from '../lib/core/text.js';
import { DAY_MS } from '../lib/core/clock.js';
import { appendEvents, patternDb } from '../lib/events/log.js';
import type { EventPayload } from '../lib/events/types.js';
import { addTerms } from '../lib/events/reducer.js';
import type { Database } from '../lib/store/db.js';

// Ranking by the rank indexes and BM25 over the term index (lib/patterns/index/ranking.ts) must give
// exactly the block the scan gives (lib/patterns/index/scan.ts, every candidate scored) — the same ids,
// in the same order, with the same scores.

const NOW = Date.parse('2026-02-01T00:00:00Z');
const ROLES = ['auditor', 'judge', 'sentinel'];
const WORDS =
  'token session migration index rollback refund invoice webhook retry timeout tenant cursor ledger cookie schema flag docs test plan'.split(
    ' ',
  );

/** The query plan of every statement `run` executes on `db`, with the values it was given. */
export function queryPlans(db: Database, run: () => void): string[] {
  const used: { sql: string; args: unknown[] }[] = [];
  const prepare = db.prepare;
  db.prepare = ((sql: string) => {
    const statement = prepare.call(db, sql);
    for (const method of ['all', 'get', 'run', 'iterate'] as const) {
      const original = statement[method] as (...args: unknown[]) => unknown;
      Object.defineProperty(statement, method, {
        value: (...args: unknown[]) => (used.push({ sql, args }), original.apply(statement, args)),
      });
    }
    return statement;
  }) as typeof db.prepare;
  try {
    run();
  } finally {
    db.prepare = prepare;
  }
  return used.flatMap(({ sql, args }) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail),
  );
}

/** A store of `n` patterns of three roles with varied counters, ages, lifecycles and context, indexed as the reducer does. */
function randomStore(n: number, seed: number, project = 'p1', root = tempProject()): { db: Database; root: string } {
  const store = openTestStore(root, project);
  const db = patternDb(store);
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const insert =
    db.prepare(`INSERT INTO patterns (project, id, id_bits, role, text, ntok, category, success_count, ignore_count, ignore_weight, held, untested,
    reinforcement_count, sightings, lifecycle, first_seen, last_used, labels, files, phases, issues, term_seq) VALUES (@project, @id, @bits, @role, @text, @ntok,
    @category, @s, @ic, @iw, @held, @untested, @r, 1, @lifecycle, '2026-01-01', @last, @labels, @files, @phases, '[]', @seq)`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const text = Array.from({ length: 3 + Math.floor(rnd() * 8) }, () => pick(WORDS)).join(' ') + ` case ${i}`;
      const row = {
        project,
        id: `p${String(i).padStart(5, '0')}`,
        role: pick(ROLES),
        text,
        ntok: indexTerms(text).length,
        category: pick(['rule', 'causal', 'observation']),
        s: Math.floor(rnd() * 6),
        ic: Math.floor(rnd() * 4),
        iw: pick([0, 0, 1.5, 2.5]),
        held: pick([0, 0, 1, 1.79, 3.2]),
        untested: Math.floor(rnd() * 8),
        r: Math.floor(rnd() * 5),
        lifecycle: pick(['observed', 'candidate', 'verified', 'verified', 'active', 'deprecated']),
        last: NOW - Math.floor(rnd() * 40 * DAY_MS) + (rnd() < 0.05 ? 3 * DAY_MS : 0), // a few from "the future" (a clock ahead)
        labels: JSON.stringify(pick([[], ['cli'], ['api']])),
        files: JSON.stringify(pick([[], ['src/a.ts']])),
        phases: JSON.stringify(pick([[], ['plan']])),
      };
      insert.run({
        ...row,
        bits: idBits(row.id),
        seq: addTerms(db, project, row.role, row.id, indexTerms(text).terms, row.ntok),
      });
    }
  })();
  return { db, root };
}

const contexts: ScoreContext[] = [
  { now: NOW, role: 'auditor' },
  { now: NOW, role: 'judge', labels: ['cli'], files: ['src/a.ts'], phase: 'plan' },
  { now: NOW + 20 * DAY_MS, role: 'sentinel', labels: ['api'] },
];

/** The walk by rank indexes ranks a page as the full scan does: the same ids, scores (exactly, or to 12 digits), completeness. */
function sameAsScan(db: Database, opts: RankOptions, limit: number, label: string, exact: boolean): void {
  const byIndex = rankScores(db, 'p1', opts, { limit });
  const full = rankByScan(db, 'p1', opts, limit);
  expect(
    byIndex.top.map((s) => s.id),
    label,
  ).toEqual(full.top.map((s) => s.id));
  byIndex.top.forEach((s, i) => (exact ? expect(s.score).toBe(full.top[i].score) : expect(s.score).toBeCloseTo(full.top[i].score, 12)));
  expect(byIndex.complete, label).toBe(full.complete);
}

describe('ranking by the rank indexes', () => {
  const store = () => randomStore(600, 11).db;

  it('gives the full scan’s block: same ids, order and scores, for every context and limit', () => {
    const db = store();
    for (const ctx of contexts) {
      for (const limit of [1, 7, 30, 201]) {
        const opts: RankOptions = { roles: ROLES, ctx };
        sameAsScan(db, opts, limit, `${ctx.role} ${limit}`, false);
      }
    }
  });

  it('fast ≡ scan over random stores: every ranked page and the digest, with a query, dismissals or neither', () => {
    for (const seed of [71, 72]) {
      const { db } = randomStore(400, seed);
      db.prepare(
        "INSERT INTO dismissals (project, issue, run, pattern, finding) SELECT 'p1', 'I-1', 'r1', id, 'A1' FROM patterns WHERE id LIKE '%3'",
      ).run();
      for (const ctx of contexts) {
        for (const extra of [
          {},
          { query: 'refund webhook retry' },
          { query: 'ledger cursor', excludeDismissed: { issue: 'I-1', run: 'r1' } },
        ]) {
          const opts: RankOptions = { roles: ROLES, ctx, ...extra };
          for (const limit of [1, 12, 90]) {
            const [walk, scan] = [rankScores(db, 'p1', opts, { limit }), rankByScan(db, 'p1', opts, limit)];
            expect(walk, `${seed} ${ctx.role} ${JSON.stringify(extra)} ${limit}`).toEqual(scan);
          }
          const all = rankByScan(db, 'p1', opts).top;
          expect(candidateDigest(db, 'p1', opts)).toBe(`${all.length}:${all.reduce((sum, s) => sum + idBits(s.id), 0)}`);
        }
      }
    }
  });

  it('a limit that falls inside a group of tied scores keeps the lowest ids, as the full scan does', () => {
    // Tied patterns score the same in SQL, while the bound that ends reading an index is computed in
    // JavaScript: a few ulps below the tie, it stopped before the lower ids of the group were read.
    const { db } = randomStore(0, 1);
    const insert =
      db.prepare(`INSERT INTO patterns (project, id, role, text, ntok, category, success_count, sightings, lifecycle, first_seen, last_used,
      labels, files, phases, issues) VALUES ('p1', ?, 'auditor', ?, 3, ?, ?, 1, 'observed', '2026-01-01', ?, '[]', '[]', '[]', '[]')`);
    const rnd = seededRandom(5);
    for (let i = 0; i < 90; i++) {
      const [category, success] = i < 60 ? ['rule', 1] : [['causal', 'observation'][i % 2], Math.floor(rnd() * 3)];
      insert.run(
        `p${Math.floor(rnd() * 1e15)
          .toString(16)
          .padStart(15, '0')}`,
        `tied case ${i}`,
        category,
        success,
        NOW - (i < 60 ? 0 : Math.floor(rnd() * 9 * DAY_MS)),
      );
    }
    for (const limit of [3, 8, 20, 37, 59]) {
      const opts: RankOptions = { roles: ROLES, ctx: contexts[0] };
      expect(
        rankScores(db, 'p1', opts, { limit }).top.map((s) => s.id),
        `limit ${limit}`,
      ).toEqual(rankByScan(db, 'p1', opts, limit).top.map((s) => s.id));
    }
  });

  it("a summary's digest is the count and id-bit sum of exactly the candidates the full scan ranks", () => {
    const db = store();
    db.prepare(
      "INSERT INTO dismissals (project, issue, run, pattern, finding) SELECT 'p1', 'I-1', 'r1', id, 'A1' FROM patterns LIMIT 40",
    ).run();
    for (const ctx of contexts) {
      for (const extra of [{}, { query: 'refund webhook retry' }, { excludeDismissed: { issue: 'I-1', run: 'r1' } }]) {
        const opts: RankOptions = { roles: ROLES, ctx, ...extra };
        const ids = rankByScan(db, 'p1', opts).top.map((s) => s.id);
        expect(ids.length).toBeGreaterThan(20);
        expect(candidateDigest(db, 'p1', opts)).toBe(`${ids.length}:${ids.reduce((sum, id) => sum + idBits(id), 0)}`);
      }
    }
    // without a query (the check a summary takes after most writes) it reads ranges of the rank indexes alone
    const plans = queryPlans(db, () => candidateDigest(db, 'p1', { roles: ROLES, ctx: contexts[1] })).filter((p) => / patterns /.test(p));
    expect(plans).toHaveLength(ROLES.length * 2);
    for (const plan of plans)
      expect(plan).toMatch(
        /^SEARCH patterns USING COVERING INDEX patterns_rank_(decaying|immune) \(project=\? AND role=\? AND <expr>>\?\)$/,
      );
  });

  it("a query's relevance, loaded once for the ranking and the digest, is loaded again after a pattern changes", () => {
    const db = store();
    const opts: RankOptions = { roles: ROLES, ctx: contexts[0], query: 'zeppelin' };
    expect(rankScores(db, 'p1', opts, { limit: 5 }).top.map((s) => s.id)).not.toContain('pzeppelin');
    const seq = addTerms(db, 'p1', 'auditor', 'pzeppelin', ['zeppelin'], 3);
    db.prepare(`INSERT INTO patterns (project, id, id_bits, role, text, ntok, category, success_count, sightings, lifecycle, first_seen, last_used, labels, files, phases, issues, term_seq)
      VALUES ('p1', 'pzeppelin', 1, 'auditor', 'zeppelin mooring checks', 3, 'rule', 0, 1, 'observed', '2026-01-01', ?, '[]', '[]', '[]', '[]', ?)`).run(
      NOW,
      seq,
    );
    expect(rankScores(db, 'p1', opts, { limit: 5 }).top[0].id).toBe('pzeppelin');
  });

  it('leaves out what was dismissed in the run, as the full scan does', () => {
    const db = store();
    const dismiss = db.prepare('INSERT OR IGNORE INTO dismissals (project, issue, run, pattern, finding) VALUES (?, ?, ?, ?, ?)');
    const best = rankScores(db, 'p1', { roles: ROLES, ctx: contexts[0] }, { limit: 5 }).top;
    for (const s of best.slice(0, 3)) dismiss.run('p1', 'I-1', 'r1', s.id, 'A1');
    const opts: RankOptions = { roles: ROLES, ctx: contexts[0], excludeDismissed: { issue: 'I-1', run: 'r1' } };
    const byIndex = rankScores(db, 'p1', opts, { limit: 10 });
    expect(byIndex.top.map((s) => s.id)).toEqual(rankByScan(db, 'p1', opts, 10).top.map((s) => s.id));
    expect(byIndex.top.map((s) => s.id)).not.toContain(best[0].id);
  });

  it('with a query, BM25 and the indexes give the full scan’s block', () => {
    const db = store();
    for (const query of ['refund webhook retry', 'session token cookie', 'tenant', 'nothing matches this']) {
      for (const limit of [5, 40]) {
        const opts: RankOptions = { roles: ROLES, ctx: contexts[1], query };
        sameAsScan(db, opts, limit, query, false);
      }
    }
  });

  it('with a query that more patterns match than a first sum of the postings holds, the threshold walk gives the full scan’s block', () => {
    const { db } = randomStore(6000, 31);
    db.prepare(
      "INSERT INTO dismissals (project, issue, run, pattern, finding) SELECT 'p1', 'I-1', 'r1', id, 'A1' FROM patterns WHERE id LIKE '%7'",
    ).run();
    const query = 'refund webhook retry ledger';
    expect(bm25Relevance(db, 'p1', ROLES, query)!.size).toBeGreaterThan(3000); // a block of 2,500 reads past the first 2,048
    for (const ctx of contexts) {
      for (const extra of [{}, { excludeDismissed: { issue: 'I-1', run: 'r1' } }]) {
        for (const limit of [3, 25, 120, 2500]) {
          const opts: RankOptions = { roles: ROLES, ctx, query, ...extra };
          sameAsScan(db, opts, limit, `${ctx.role} ${limit}`, true);
        }
      }
    }
  });

  it('a ranking asked for more lines on the same connection goes on from the last walk and gives the full scan’s block', () => {
    const { db } = randomStore(3000, 43);
    for (const query of [undefined, 'refund webhook retry ledger']) {
      for (const ctx of contexts) {
        const opts: RankOptions = { roles: ROLES, ctx, query };
        const first = rankScores(db, 'p1', opts, { limit: 7 });
        expect(first.top).toEqual(rankByScan(db, 'p1', opts, 7).top);
        for (const limit of [40, 7, 300]) {
          const more = rankScores(db, 'p1', opts, { limit });
          const full = rankByScan(db, 'p1', opts, limit);
          expect(more.top, `${query} ${ctx.role} ${limit}`).toEqual(full.top);
          expect(more.complete).toBe(full.complete);
        }
      }
    }
  });

  it('a walk is not reused once a pattern changed: the next ranking sees the change', () => {
    const { db } = randomStore(800, 47);
    const opts: RankOptions = { roles: ROLES, ctx: contexts[0], query: 'refund webhook retry' };
    const before = rankScores(db, 'p1', opts, { limit: 5 }).top;
    db.prepare("UPDATE patterns SET lifecycle = 'deprecated' WHERE project = 'p1' AND id = ?").run(before[0].id);
    const after = rankScores(db, 'p1', opts, { limit: 20 }).top;
    expect(after.map((s) => s.id)).not.toContain(before[0].id);
    expect(after).toEqual(rankByScan(db, 'p1', opts, 20).top);
  });

  it('a query whose best match is deprecated scales relevance by the best candidate, as the full scan does', () => {
    const { db } = randomStore(600, 37);
    const query = 'refund webhook retry';
    const best = [...bm25Relevance(db, 'p1', ROLES, query)!].sort((a, b) => b[1] - a[1])[0][0];
    db.prepare("UPDATE patterns SET lifecycle = 'deprecated' WHERE id = ?").run(best);
    for (const limit of [1, 10, 60]) {
      const opts: RankOptions = { roles: ROLES, ctx: contexts[2], query };
      const byIndex = rankScores(db, 'p1', opts, { limit });
      expect(byIndex.top.map((s) => s.id)).not.toContain(best);
      expect(byIndex.top).toEqual(rankByScan(db, 'p1', opts, limit).top);
    }
  });

  it('a configured prior ranks by the full scan (the indexes are built with the default one)', () => {
    const db = store();
    const ctx = { ...contexts[0], prior: { success: 3, failure: 1 } };
    const top = rankScores(db, 'p1', { roles: ROLES, ctx }, { limit: 10 }).top;
    expect(top).toEqual(rankByScan(db, 'p1', { roles: ROLES, ctx }, 10).top);
  });

  it('with an index a walk reads set aside (a replay builds them at its end), ranks by the full scan, never by a walk of the table', () => {
    for (const missing of ['patterns_seq', 'patterns_rank_immune']) {
      const db = store();
      db.exec(`DROP INDEX ${missing}`);
      const opts: RankOptions = { roles: ROLES, ctx: contexts[1], query: 'refund webhook retry' };
      let top: unknown;
      const plans = queryPlans(db, () => (top = rankScores(db, 'p1', opts, { limit: 10 }).top)).join('\n');
      expect(plans, missing).not.toMatch(
        /patterns_rank_\w+ \(project=\? AND role=\? AND <expr>|patterns_seq \(project=\? AND term_seq=\?\)/,
      ); // no walk
      expect(top, missing).toEqual(rankByScan(db, 'p1', opts, 10).top);
    }
  });

  it('a pattern of stop-words only (no index term) takes no other pattern’s relevance: the walk and the scan agree', () => {
    // Its postings would start where the next pattern's do; holding none, it must match no query.
    const store = openTestStore(tempProject(), 'p1');
    const observe = (pattern: string, text: string): EventPayload => ({
      type: 'pattern.observed',
      pattern,
      role: 'auditor',
      text,
      category: 'rule',
      issue: 'I-1',
      run: 'r1',
      phase: 'plan',
      labels: [],
      files: [],
      deliberation: 'd-1',
    });
    appendEvents(store, [
      observe('pstop', 'We should not do this.'),
      observe('prefund', 'Refund webhooks retry on timeout'),
      observe('pother', 'Cursor pagination in the ledger'),
    ]);
    const db = patternDb(store);
    expect(db.prepare("SELECT term_seq FROM patterns WHERE id = 'pstop'").pluck().get()).toBe(0);
    const opts: RankOptions = { roles: ['auditor'], ctx: contexts[0], query: 'refund webhook retry' };
    const walk = rankScores(db, 'p1', opts, { limit: 3 }).top;
    expect(walk).toEqual(rankByScan(db, 'p1', opts, 3).top);
    expect(walk[0].id).toBe('prefund');
    expect(walk.find((s) => s.id === 'pstop')!.score).toBeLessThan(walk.find((s) => s.id === 'pother')!.score + 1e-12);
  });

  it('reads each role’s rank indexes in key order, and a query’s matches by where their postings start, from indexes alone: no sort of the role, no row of the table', () => {
    const db = store();
    for (const extra of [{}, { query: 'refund webhook retry' }, { excludeDismissed: { issue: 'I-1', run: 'r1' } }]) {
      const plans = queryPlans(db, () => rankScores(db, 'p1', { roles: ROLES, ctx: contexts[0], ...extra }, { limit: 10 })).join('\n');
      expect(plans).toMatch(/USING COVERING INDEX patterns_rank_decaying/);
      expect(plans).toMatch(/USING COVERING INDEX patterns_rank_immune/);
      if ('query' in extra) expect(plans).toMatch(/USING COVERING INDEX patterns_seq/); // a page of matches
      expect(plans).not.toMatch(/SCAN patterns|USING INDEX patterns_(rank|seq)|TEMP B-TREE/);
    }
  });

  it('a summary overtaken or not, whether a pattern first seen since is a candidate is read from the first-sighting index, never by a walk of the project', () => {
    const { db } = randomStore(300, 23);
    const opts: RankOptions = { roles: ROLES, ctx: contexts[0], excludeDismissed: { issue: 'I-1', run: 'r1' } };
    for (const [newest, expected] of [
      ['2025-12-31', true],
      ['2099-01-01', false],
    ] as const) {
      const plans = queryPlans(db, () => expect(newCandidateSince(db, 'p1', opts, newest)).toBe(expected));
      expect(plans.some((p) => /patterns USING (COVERING )?INDEX patterns_first_seen/.test(p))).toBe(true);
      for (const p of plans) expect(p).not.toMatch(/SCAN patterns\b|patterns USING PRIMARY KEY \(project=\?\)$/);
    }
  });

  it('with a query, whether a pattern first seen since is a candidate weighs its relevance as the full scan does', () => {
    const { db } = randomStore(600, 41);
    const query = 'refund webhook retry';
    // 400 days on, a decaying pattern's base is ~0: its relevance alone decides whether it passes the cut
    const opts: RankOptions = { roles: ROLES, ctx: { now: NOW + 400 * DAY_MS, role: 'auditor' }, query };
    const relevance = [...bm25Relevance(db, 'p1', ROLES, query)!];
    const decaying = new Set(db.prepare(`SELECT id FROM patterns WHERE ${DECAYING_SQL}`).pluck().all() as string[]);
    const matching = relevance.find(([id, r]) => decaying.has(id) && r > 0.2 && r < 0.3)![0]; // 0.6 · relevance passes the cut of 0.1
    const unmatched = [...decaying].find((id) => !relevance.some(([other]) => other === id))!;
    for (const [id, expected] of [
      [matching, true],
      [unmatched, false],
    ] as const) {
      db.prepare("UPDATE patterns SET first_seen = CASE WHEN id = ? THEN '2026-02-01' ELSE '2026-01-01' END").run(id);
      expect(newCandidateSince(db, 'p1', opts, '2026-01-15')).toBe(expected);
      expect(rankByScan(db, 'p1', opts).top.some((s) => s.id === id)).toBe(expected);
    }
  });

  it('with a query, reads only the postings of the query’s terms and the patterns they name', () => {
    const { db } = randomStore(300, 17);
    const plans = queryPlans(db, () =>
      rankScores(db, 'p1', { roles: ROLES, ctx: contexts[1], query: 'refund webhook retry' }, { limit: 10 }),
    );
    expect(plans.some((p) => /pattern_terms .*term=\?/.test(p))).toBe(true);
    // A walk of the project's or a role's patterns or postings: what SQLite chose before the CROSS JOINs.
    for (const p of plans)
      expect(p).not.toMatch(
        /SCAN (patterns|pattern_terms)\b|(patterns|pattern_terms) USING (PRIMARY KEY|INDEX patterns_role) \(project=\?( AND role=\?)?\)$/,
      );
  });

  it('the rank keys in SQL are the JavaScript rankKey, and the migration indexes those very expressions', () => {
    const db = store();
    const rows = db
      .prepare(`SELECT held, untested, ignore_weight, reinforcement_count, lifecycle, category, last_used,
      ${DECAYING_KEY_SQL} AS decaying, ${IMMUNE_KEY_SQL} AS immune FROM patterns`)
      .all() as (Parameters<typeof rankKey>[0] & { decaying: number; immune: number })[];
    for (const r of rows) {
      const { key, immune } = rankKey(r);
      expect(key).toBeCloseTo(immune ? r.immune : r.decaying, 9);
    }
    const sql = (name: string) => (db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(name) as { sql: string }).sql;
    expect(sql('patterns_rank_decaying')).toContain(`(${DECAYING_KEY_SQL})`);
    expect(sql('patterns_rank_immune')).toContain(`(${IMMUNE_KEY_SQL})`);
  });
});

describe('BM25 over the project’s own patterns (issue 7: no side channel in a shared store)', () => {
  it('another project in the same store moves nothing', () => {
    const root = tempProject();
    const { db } = randomStore(200, 5, 'mine', root);
    const before = bm25Relevance(db, 'mine', ROLES, 'refund webhook ledger');
    // another project floods the store with "refund": in a shared FTS5 index that would change the IDF
    randomStore(0, 1, 'theirs', root);
    const other = openTestStore(root, 'theirs');
    const row = patternDb(
      other,
    ).prepare(`INSERT INTO patterns (project, id, role, text, ntok, category, lifecycle, first_seen, last_used, term_seq)
      VALUES ('theirs', ?, 'auditor', 'refund refund', 1, 'rule', 'observed', '2026-01-01', 0, ?)`);
    for (let i = 0; i < 500; i++) {
      row.run(`q${i}`, addTerms(patternDb(other), 'theirs', 'auditor', `q${i}`, ['refund'], 1));
    }
    expect(before).toBeDefined();
    expect(bm25Relevance(db, 'mine', ROLES, 'refund webhook ledger')).toEqual(before);
  });
});
