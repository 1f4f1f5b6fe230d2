import { DAY_MS } from '../core/clock.js';
import { CATEGORY_WEIGHT, DECAY_DAYS, DECAY_IMMUNE_REINFORCEMENTS, DEFAULT_PRIOR } from '../core/score-weights.js';
import { CATEGORY_SQL, SUPPORT_SQL } from '../store/rank-keys.js';
import type { Category } from '../events/types.js';
import { support, type Evidence } from '../events/credit.js';

// A pattern's score (SPEC §3.4, §3.9.3, §3.10; docs/internals.md, "Scoring and ranking"), pure; baseScoreSql in SQL.

export const SCORE_CUT = 0.1;
export const CROSS_ROLE_FACTOR = 0.8;

export interface ScoredState extends Evidence {
  role: string;
  category: Category;
  reinforcement_count: number;
  lifecycle: string;
  last_used: number;
  labels: string[];
  files: string[];
  phases: string[];
}

/** α pseudo-successes and β pseudo-failures (SPEC §3.9.3). */
export interface Prior {
  success: number;
  failure: number;
}

export interface ScoreContext {
  now: number;
  role: string;
  prior?: Prior;
  labels?: string[];
  files?: string[];
  phase?: string;
}

export interface ScoreFactors {
  rate: number;
  days: number;
  decay: number;
  category: number;
  context: number;
  role: number;
  base: number;
}

export function successRate(e: Evidence, prior: Prior = DEFAULT_PRIOR): number {
  const s = support(e);
  const total = s + Math.max(0, e.ignore_weight) + prior.success + prior.failure;
  return total > 0 ? (s + prior.success) / total : 0;
}

export function decayFactor(days: number, reinforcements: number, lifecycle: string): number {
  if (reinforcements >= DECAY_IMMUNE_REINFORCEMENTS || lifecycle === 'active') return 1;
  return Math.exp(-Math.max(0, days) / DECAY_DAYS);
}

const overlaps = (a: string[] | undefined, b: string[]) => !!a && a.length > 0 && a.some((x) => b.includes(x));

export function contextFactor(labels: boolean, files: boolean, phase: boolean): number {
  return 1 + (labels ? 0.15 : 0) + (files ? 0.15 : 0) + (phase ? 0.05 : 0);
}

export function contextBoost(p: Pick<ScoredState, 'labels' | 'files' | 'phases'>, ctx: Omit<ScoreContext, 'now' | 'role'>): number {
  return contextFactor(overlaps(ctx.labels, p.labels), overlaps(ctx.files, p.files), !!ctx.phase && p.phases.includes(ctx.phase));
}

export type ScoredCounters = Omit<ScoredState, 'role' | 'labels' | 'files' | 'phases'>;

function scoreCounters(p: ScoredCounters, now: number, context: number, ownRole: boolean, prior: Prior | undefined): ScoreFactors {
  const rate = successRate(p, prior);
  const days = (now - p.last_used) / DAY_MS;
  const decay = decayFactor(days, p.reinforcement_count, p.lifecycle);
  const category = CATEGORY_WEIGHT[p.category] ?? 1;
  const role = ownRole ? 1 : CROSS_ROLE_FACTOR;
  return { rate, days, decay, category, context, role, base: rate * decay * category * context * role };
}

export function scorePattern(p: ScoredState, ctx: ScoreContext): ScoreFactors {
  return scoreCounters(p, ctx.now, contextBoost(p, ctx), p.role === ctx.role, ctx.prior);
}

/** What an agent sees (SPEC §3.9.3): category, context and role are no evidence. */
export function shownScore(f: Pick<ScoreFactors, 'rate' | 'decay'>): number {
  return f.rate * f.decay;
}

/** So SQLite ranks without handing every row to JavaScript; tested to agree. */
export function baseScoreSql(ctx: ScoreContext): {
  sql: string;
  params: Record<string, unknown>;
  parts: { rest: string; role: string };
} {
  const prior = ctx.prior ?? DEFAULT_PRIOR;
  const params: Record<string, unknown> = {
    now: ctx.now,
    role: ctx.role,
    day: DAY_MS,
    decayDays: DECAY_DAYS,
    immune: DECAY_IMMUNE_REINFORCEMENTS,
    cross: CROSS_ROLE_FACTOR,
    alpha: prior.success,
    priorTotal: prior.success + prior.failure,
  };
  // a JSON array of strings: a quoted needle matches whole elements only
  const anyOf = (column: string, values: string[] | undefined, name: string) => {
    const tests = (values ?? []).map((v, i) => {
      params[`${name}${i}`] = JSON.stringify(v);
      return `instr(${column}, @${name}${i}) > 0`;
    });
    return tests.length ? `(${tests.join(' OR ')})` : '0';
  };
  const rate = `CASE WHEN ${SUPPORT_SQL} + MAX(0, ignore_weight) + @priorTotal > 0
      THEN (${SUPPORT_SQL} + @alpha) / (${SUPPORT_SQL} + MAX(0, ignore_weight) + @priorTotal) ELSE 0 END`;
  const decay = `CASE WHEN reinforcement_count >= @immune OR lifecycle = 'active' THEN 1.0
      ELSE exp(-MAX(0, (@now - last_used) / @day) / @decayDays) END`;
  const context = `(1 + 0.15 * ${anyOf('labels', ctx.labels, 'label')} + 0.15 * ${anyOf('files', ctx.files, 'file')}
      + 0.05 * ${anyOf('phases', ctx.phase ? [ctx.phase] : [], 'phase')})`;
  const role = 'CASE WHEN role = @role THEN 1.0 ELSE @cross END';
  return {
    sql: `((${rate}) * (${decay}) * (${CATEGORY_SQL}) * ${context} * (${role}))`,
    params,
    parts: { rest: `((${rate}) * (${decay}) * (${CATEGORY_SQL}))`, role: `(${role})` },
  };
}

export function finalScore(base: number, relevance: number | undefined): number {
  return relevance === undefined ? base : 0.6 * relevance + 0.4 * base;
}
