import { DAY_MS } from './clock.js';
import type { Category } from './events.js';

// The score of a pattern at query time (SPEC §3.4), as a pure function with every factor exposed.
//   rate  = success / (success + W), W = ignore weight if > 0 else ignore count
//   decay = 1 when reinforced ≥ 3 times or active, else exp(−days / 14)
//   cat   = 1.3 rule · 1.1 causal · 1.0 observation
//   ctx   = 1 + 0.15·labels overlap + 0.15·files overlap + 0.05·same phase
//   role  = 1.0 own role · 0.8 another role of the same kind
//   base  = rate · decay · cat · ctx · role;  final = 0.6·relevance + 0.4·base when relevance exists

export const SCORE_CUT = 0.1;
export const DECAY_DAYS = 14;
export const DECAY_IMMUNE_REINFORCEMENTS = 3;
export const CATEGORY_WEIGHT: Record<Category, number> = { rule: 1.3, causal: 1.1, observation: 1.0 };
export const CROSS_ROLE_FACTOR = 0.8;

export interface ScoredState {
  role: string;
  category: Category;
  success_count: number;
  ignore_count: number;
  ignore_weight: number;
  reinforcement_count: number;
  lifecycle: string;
  last_used: number;
  labels: string[];
  files: string[];
  phases: string[];
}

export interface ScoreContext {
  now: number;
  role: string;
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

export function successRate(success: number, ignoreCount: number, ignoreWeight: number): number {
  const w = ignoreWeight > 0 ? ignoreWeight : ignoreCount;
  const total = success + w;
  return total > 0 ? Math.max(0, success) / total : 0;
}

export function decayFactor(days: number, reinforcements: number, lifecycle: string): number {
  if (reinforcements >= DECAY_IMMUNE_REINFORCEMENTS || lifecycle === 'active') return 1;
  return Math.exp(-Math.max(0, days) / DECAY_DAYS);
}

const overlaps = (a: string[] | undefined, b: string[]) => !!a && a.length > 0 && a.some((x) => b.includes(x));

export function contextBoost(p: Pick<ScoredState, 'labels' | 'files' | 'phases'>, ctx: Omit<ScoreContext, 'now' | 'role'>): number {
  return 1 + (overlaps(ctx.labels, p.labels) ? 0.15 : 0) + (overlaps(ctx.files, p.files) ? 0.15 : 0) + (ctx.phase && p.phases.includes(ctx.phase) ? 0.05 : 0);
}

export function scorePattern(p: ScoredState, ctx: ScoreContext): ScoreFactors {
  const rate = successRate(p.success_count, p.ignore_count, p.ignore_weight);
  const days = (ctx.now - p.last_used) / DAY_MS;
  const decay = decayFactor(days, p.reinforcement_count, p.lifecycle);
  const category = CATEGORY_WEIGHT[p.category] ?? 1;
  const context = contextBoost(p, ctx);
  const role = p.role === ctx.role ? 1 : CROSS_ROLE_FACTOR;
  return { rate, days, decay, category, context, role, base: rate * decay * category * context * role };
}

/** Blend relevance in when there is a relevance signal for this query. */
export function finalScore(base: number, relevance: number | undefined): number {
  return relevance === undefined ? base : 0.6 * relevance + 0.4 * base;
}
