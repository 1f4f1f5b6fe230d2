import { describe, it, expect } from 'vitest';
import { DAY_MS } from '../lib/core/clock.js';
import {
  baseScoreSql,
  contextBoost,
  decayFactor,
  finalScore,
  scorePattern,
  shownScore,
  successRate,
  SCORE_CUT,
  type ScoredState,
} from '../lib/patterns/scoring.js';
import type { Pattern } from '../lib/patterns/queries.js';
import { rankPatterns } from '../lib/patterns/queries.js';
import { basePassesSql } from '../lib/patterns/index/candidates.js';
import { openTestStore, tempProject } from './helpers.js';
import { patternDb } from '../lib/events/log.js';

// SPEC §3.4, §3.9.3: each factor of the score on its own, then the cut and the relevance blend.

const NOW = Date.parse('2025-03-01T00:00:00Z');
/** The smoothed rate of one success and no ignores: (1 + 1) / (1 + 0 + 1 + 1). */
const ONE_SUCCESS = 2 / 3;

/** A pattern of the auditor with one success, used just now, no context: every factor is 1 but the category and the rate. */
function state(over: Partial<ScoredState> = {}): ScoredState {
  return {
    role: 'auditor',
    category: 'observation',
    held: 1,
    untested: 0,
    ignore_weight: 0,
    reinforcement_count: 0,
    lifecycle: 'observed',
    last_used: NOW,
    labels: [],
    files: [],
    phases: [],
    ...over,
  };
}

function pattern(id: string, over: Partial<ScoredState> = {}): Pattern {
  return {
    ...state(over),
    project: 'test',
    id,
    text: `pattern ${id}`,
    ntok: 2,
    sightings: 1,
    was_validated: 0,
    regressed: 0,
    first_seen: new Date(NOW).toISOString(),
    issues: [],
    promoted_by: null,
    reason: null,
    success_count: over.held ?? 1,
    ignore_count: over.ignore_weight ? 1 : 0,
  };
}

const ctx = { now: NOW, role: 'auditor' };

/** `count` patterns in many random states (a seeded generator: the same ones in every run). */
function randomPatterns(count: number, seed: number): Pattern[] {
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  return Array.from({ length: count }, (_, i) =>
    pattern(`p${String(i).padStart(3, '0')}`, {
      role: pick(['auditor', 'judge']),
      category: pick(['rule', 'causal', 'observation'] as const),
      held: pick([0, 0.5, 1, 2.7]) * Math.floor(random() * 3),
      untested: Math.floor(random() * 8),
      ignore_weight: pick([0, 0, 1.5, 2.5, 4]),
      reinforcement_count: Math.floor(random() * 5),
      lifecycle: pick(['observed', 'candidate', 'verified', 'active']),
      last_used: NOW - Math.floor(random() * 40 * DAY_MS),
      labels: pick([[], ['cli'], ['api', 'cli-tools']]),
      files: pick([[], ['src/a.ts'], ['src/b.ts']]),
      phases: pick([[], ['plan'], ['review', 'plan']]),
    }),
  );
}

describe('time decay', () => {
  it('falls to exp(-1) ≈ 0.368 after 14 days unused', () => {
    const f = scorePattern(state({ last_used: NOW - 14 * DAY_MS }), ctx);
    expect(f.days).toBeCloseTo(14, 10);
    expect(f.decay).toBeCloseTo(0.3679, 4);
    expect(f.base).toBeCloseTo(ONE_SUCCESS * 0.3679, 4);
  });

  it('is 1 for a pattern used just now and halves after about 9.7 days', () => {
    expect(decayFactor(0, 0, 'observed')).toBe(1);
    expect(decayFactor(14 * Math.LN2, 0, 'candidate')).toBeCloseTo(0.5, 10);
  });

  it('does not apply once a pattern was reinforced 3 times', () => {
    expect(decayFactor(60, 2, 'verified')).toBeCloseTo(Math.exp(-60 / 14), 10);
    expect(decayFactor(60, 3, 'verified')).toBe(1);
    expect(scorePattern(state({ last_used: NOW - 60 * DAY_MS, reinforcement_count: 3 }), ctx).decay).toBe(1);
  });

  it('does not apply to an active (promoted) pattern', () => {
    expect(decayFactor(60, 0, 'active')).toBe(1);
    expect(scorePattern(state({ last_used: NOW - 60 * DAY_MS, lifecycle: 'active' }), ctx).base).toBeCloseTo(ONE_SUCCESS, 12);
  });
});

describe('category weight', () => {
  it.each([
    ['rule', 1.3],
    ['causal', 1.1],
    ['observation', 1.0],
  ] as const)('%s weighs %d', (category, weight) => {
    const f = scorePattern(state({ category }), ctx);
    expect(f.category).toBe(weight);
    expect(f.base).toBeCloseTo(weight * ONE_SUCCESS, 10);
  });
});

describe('context boost', () => {
  const learned = { labels: ['cli', 'api'], files: ['src/cli/status.ts'], phases: ['plan'] };

  it('is 1 with no context or no overlap', () => {
    expect(contextBoost(learned, {})).toBe(1);
    expect(contextBoost(learned, { labels: ['auth'], files: ['src/auth/session.ts'], phase: 'qa' })).toBe(1);
  });

  it('adds 0.15 for shared labels, 0.15 for shared files and 0.05 for the same phase', () => {
    expect(contextBoost(learned, { labels: ['api', 'auth'] })).toBeCloseTo(1.15, 10);
    expect(contextBoost(learned, { files: ['README.md', 'src/cli/status.ts'] })).toBeCloseTo(1.15, 10);
    expect(contextBoost(learned, { phase: 'plan' })).toBeCloseTo(1.05, 10);
  });

  it('adds them up when all three match, once each however many items overlap', () => {
    expect(contextBoost(learned, { labels: ['cli', 'api'], files: ['src/cli/status.ts'], phase: 'plan' })).toBeCloseTo(1.35, 10);
    const f = scorePattern(state({ category: 'rule', ...learned }), {
      ...ctx,
      labels: ['cli'],
      files: ['src/cli/status.ts'],
      phase: 'plan',
    });
    expect(f.context).toBeCloseTo(1.35, 10);
    expect(f.base).toBeCloseTo(1.3 * 1.35 * ONE_SUCCESS, 10);
  });
});

describe('role factor', () => {
  it('is 1 for the own role and 0.8 for another role of the same kind', () => {
    expect(scorePattern(state({ role: 'auditor' }), ctx).role).toBe(1);
    const cross = scorePattern(state({ role: 'judge' }), ctx);
    expect(cross.role).toBe(0.8);
    expect(cross.base).toBeCloseTo(0.8 * ONE_SUCCESS, 10);
  });
});

describe('success rate (smoothed, SPEC §3.9.3)', () => {
  it('divides what held up plus one by that plus the ignore weight plus two', () => {
    // 3 kept findings, 2 dismissals by a sentinel-weighted validator (1.5 each): (3 + 1) / (3 + 3 + 2)
    expect(successRate({ held: 3, untested: 0, ignore_weight: 3 })).toBeCloseTo(0.5, 10);
    expect(scorePattern(state({ held: 3, ignore_weight: 3 }), ctx).rate).toBeCloseTo(0.5, 10);
  });

  it('counts untested credit 0.01 a time up to 0.05: an untested rule never outranks an observation that held up once (SPEC §3.10.1)', () => {
    expect(successRate({ held: 0, untested: 3, ignore_weight: 0 })).toBeCloseTo(1.03 / 2.03, 10);
    const riddenAlong = successRate({ held: 0, untested: 50, ignore_weight: 0 });
    expect(riddenAlong).toBeCloseTo(1.05 / 2.05, 10);
    // the category weights (rule 1.3, observation 1) do not turn the order round
    const untestedRule = scorePattern(state({ category: 'rule', held: 0, untested: 50 }), ctx).base;
    const heldOnceObservation = scorePattern(state({ category: 'observation', held: 1, untested: 0 }), ctx).base;
    expect(untestedRule).toBeLessThan(heldOnceObservation);
  });

  it('starts from one half, and a pattern that never held up is not yet at 0', () => {
    expect(successRate({ held: 0, untested: 0, ignore_weight: 0 })).toBe(0.5);
    expect(successRate({ held: 0, untested: 0, ignore_weight: 3 })).toBeCloseTo(1 / 5, 10);
  });

  it('ranks a first sighting below a pattern that held up five times (an unproven pattern is not a proven one)', () => {
    const fresh = scorePattern(state({ category: 'rule', held: 0, untested: 1 }), ctx);
    const proven = scorePattern(state({ category: 'observation', held: 5, untested: 1, reinforcement_count: 5 }), ctx);
    expect(fresh.base).toBeLessThan(proven.base);
  });

  it('takes its prior from the context (config "prior")', () => {
    expect(successRate({ held: 1, untested: 0, ignore_weight: 0 }, { success: 0, failure: 0 })).toBe(1);
    expect(scorePattern(state(), { ...ctx, prior: { success: 2, failure: 3 } }).rate).toBeCloseTo(3 / 6, 12);
  });
});

describe('the score shown to agents', () => {
  it('is rate × decay, within 0..1 even for a rule in a matching context', () => {
    const f = scorePattern(state({ category: 'rule', held: 40, labels: ['cli'] }), { ...ctx, labels: ['cli'] });
    expect(f.base).toBeGreaterThan(1);
    expect(shownScore(f)).toBeCloseTo((41 / 42) * 1, 12);
    expect(shownScore(scorePattern(state({ last_used: NOW - 14 * DAY_MS }), ctx))).toBeCloseTo(ONE_SUCCESS * Math.exp(-1), 10);
  });
});

describe('all factors together', () => {
  it('multiplies rate, decay, category, context and role into base', () => {
    const p = state({
      role: 'judge',
      category: 'causal',
      held: 3,
      ignore_weight: 1,
      last_used: NOW - 7 * DAY_MS,
      labels: ['cli'],
    });
    const f = scorePattern(p, { ...ctx, labels: ['cli'] });
    expect(f).toMatchObject({ category: 1.1, role: 0.8 });
    expect(f.rate).toBeCloseTo(4 / 6, 12);
    expect(f.context).toBeCloseTo(1.15, 10);
    expect(f.decay).toBeCloseTo(Math.exp(-0.5), 10);
    expect(f.base).toBeCloseTo((4 / 6) * Math.exp(-0.5) * 1.1 * 1.15 * 0.8, 10);
  });
});

/** Rank these patterns the way format-patterns does: stored, then scored and cut inside SQLite. */
function rank(patterns: Pattern[], relevance?: Map<string, number>) {
  return rankPatterns(storeWith(patterns), 'test', { roles: ['auditor', 'judge'], ctx, relevance });
}

describe('the 0.1 cut (rankPatterns)', () => {
  it('drops a pattern scoring 0.099 and keeps one scoring exactly 0.1', () => {
    expect(SCORE_CUT).toBe(0.1);
    const below = pattern('p-below', { held: 99, ignore_weight: 903 }); // 100 / 1004
    const at = pattern('p-at', { held: 1, ignore_weight: 17 }); // 2 / 20
    const ranked = rank([below, at]);
    expect(ranked.map((r) => r.pattern.id)).toEqual(['p-at']);
    expect(ranked[0].score).toBe(0.1);
  });

  it('orders best first, ties by id', () => {
    const ranked = rank([pattern('p3'), pattern('p2', { category: 'rule' }), pattern('p1')]);
    expect(ranked.map((r) => r.pattern.id)).toEqual(['p2', 'p1', 'p3']);
  });

  it('scores in SQL exactly as scorePattern does, context and cross-role included', () => {
    const p = pattern('p-ctx', {
      role: 'judge',
      labels: ['cli'],
      files: ['src/a.ts'],
      phases: ['plan'],
      last_used: NOW - 7 * DAY_MS,
      category: 'causal',
    });
    const [r] = rankPatterns(storeWith([p]), 'test', {
      roles: ['judge'],
      ctx: { ...ctx, labels: ['cli'], files: ['src/a.ts'], phase: 'plan' },
    });
    expect(r.score).toBeCloseTo(scorePattern(p, { ...ctx, labels: ['cli'], files: ['src/a.ts'], phase: 'plan' }).base, 12);
    expect(r.factors.context).toBeCloseTo(1.35, 10);
    expect(r.factors.role).toBe(0.8);
  });

  it('ranks in SQL by the same score as scorePattern, over many random states and two priors', () => {
    const patterns = randomPatterns(300, 7);
    const db = storeWith(patterns);
    for (const prior of [undefined, { success: 2, failure: 0.5 }]) {
      const query = { ...ctx, labels: ['cli'], files: ['src/a.ts'], phase: 'plan', prior };
      const ranked = rankPatterns(db, 'test', { roles: ['auditor', 'judge'], ctx: query });
      const expected = patterns
        .map((p) => ({ id: p.id, score: scorePattern(p, query).base }))
        .filter((x) => x.score >= SCORE_CUT)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      expect(ranked.length).toBeGreaterThan(100);
      expect(ranked.map((r) => r.pattern.id)).toEqual(expected.map((x) => x.id));
      ranked.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i].score, 12));
    }
  });

  it('decides whether a base reaches a cut as the full expression does, at the cut, one ulp either side, and near the context bound', () => {
    const patterns = randomPatterns(200, 11);
    const db = storeWith(patterns);
    const ulp = (x: number, step: 1 | -1) => {
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, x);
      view.setBigUint64(0, view.getBigUint64(0) + BigInt(step));
      return view.getFloat64(0);
    };
    for (const context of [
      ctx,
      { ...ctx, labels: ['cli'], files: ['src/a.ts'], phase: 'plan' },
      { ...ctx, role: 'judge', prior: { success: 2, failure: 0.5 } },
    ]) {
      const base = baseScoreSql(context);
      const passes = basePassesSql(context);
      const scores = db.prepare(`SELECT ${base.sql} AS s FROM patterns`).pluck().all(base.params) as number[];
      const both = db.prepare(`SELECT id, ${passes.sql} AS fast, ${base.sql} >= @cut AS full FROM patterns`);
      let compared = 0;
      for (const s of scores.filter((x) => x > 0).slice(0, 60)) {
        for (const cut of [s, ulp(s, 1), ulp(s, -1), s / 1.35, ulp(s / 1.35, 1), s * 1.35, s / 1.15, 0.1]) {
          for (const row of both.all({ ...passes.params, cut }) as { id: string; fast: number; full: number }[]) {
            expect(row.fast, `${row.id} at ${cut}`).toBe(row.full);
            compared++;
          }
        }
      }
      expect(compared).toBeGreaterThan(50_000);
    }
  });

  it('matches learned labels as whole values, not substrings', () => {
    const p = pattern('p-lbl', { labels: ['cli-tools'] });
    const [r] = rankPatterns(storeWith([p]), 'test', { roles: ['auditor'], ctx: { ...ctx, labels: ['cli'] } });
    expect(r.factors.context).toBe(1);
    expect(r.score).toBeCloseTo(ONE_SUCCESS, 12);
  });
});

function storeWith(patterns: Pattern[]) {
  const store = openTestStore(tempProject(), 'test');
  const insert = patternDb(
    store,
  ).prepare(`INSERT INTO patterns (project, id, role, text, ntok, category, success_count, ignore_count, ignore_weight,
    held, untested, reinforcement_count, sightings, lifecycle, first_seen, last_used, labels, files, phases, issues)
    VALUES (@project, @id, @role, @text, @ntok, @category, @success_count, @ignore_count, @ignore_weight,
    @held, @untested, @reinforcement_count, @sightings, @lifecycle, @first_seen, @last_used, @labels, @files, @phases, @issues)`);
  for (const p of patterns) {
    insert.run({
      ...p,
      labels: JSON.stringify(p.labels),
      files: JSON.stringify(p.files),
      phases: JSON.stringify(p.phases),
      issues: JSON.stringify(p.issues),
    });
  }
  return patternDb(store);
}

describe('relevance blend', () => {
  it('is 0.6·relevance + 0.4·base with a relevance signal, else base', () => {
    expect(finalScore(0.5, 0.8)).toBeCloseTo(0.68, 10);
    expect(finalScore(0.5, 0)).toBeCloseTo(0.2, 10);
    expect(finalScore(0.5, undefined)).toBe(0.5);
  });

  it('applies the cut to the blended score: a pattern the query does not match can fall below it', () => {
    const matched = pattern('p-matched', { held: 1, ignore_weight: 7 }); // base 2 / 10
    const unmatched = pattern('p-unmatched', { held: 1, ignore_weight: 7 }); // base 2 / 10, relevance 0
    const ranked = rank([matched, unmatched], new Map([['p-matched', 0.5]]));
    expect(ranked).toHaveLength(1);
    expect(ranked[0].pattern.id).toBe('p-matched');
    expect(ranked[0].relevance).toBe(0.5);
    expect(ranked[0].score).toBeCloseTo(0.6 * 0.5 + 0.4 * 0.2, 10);
    expect(rank([unmatched])).toHaveLength(1); // without a query it stays
  });
});
