import { readSmallFile } from '../io/read.js';
import { jsonErrorPlace } from '../core/json.js';
import { join } from 'node:path';
import { CairnError } from '../core/errors.js';

export type RoleKind = 'adversarial' | 'validator' | 'other';

export interface Config {
  roles: { adversarial: string[]; validator: string[] };
  /** Token budget per role kind, and per role name where set (SPEC §3.5). */
  budgets: { adversarial: number; other: number; byRole: Record<string, number> };
  /** Tokens kept free for the rest of the prompt with --remaining-tokens, and the smallest useful block. */
  reserve: number;
  minBlock: number;
  /** Penalty weight of an adversarial role's dismissed pattern (SPEC §3.7). */
  roleWeights: Record<string, number>;
  defaultRoleWeight: number;
  /** The success rate's prior (SPEC §3.9.3): rate = (successes + success) / (successes + ignores + success + failure). */
  prior: { success: number; failure: number };
  /** How fast evidence ages (SPEC §3.10.2): after this many newer verdicts on a pattern, an old one weighs half. */
  evidence: { halfLife: number };
  tokenizer: { encoding: string; margin: number };
  embeddings: { command?: string };
  /** SPEC §4.1, §4.4: words added to the tag vocabulary; auto-recall's token budget and how long it waits for bd. */
  knowledge: { tags: string[]; budget: number; bdTimeoutMs: number; sanitizeEveryMs: number };
}

export const DEFAULT_CONFIG: Config = {
  roles: { adversarial: ['auditor', 'judge', 'sentinel'], validator: ['curator', 'inspector', 'lens'] },
  budgets: { adversarial: 800, other: 500, byRole: {} },
  reserve: 2000,
  minBlock: 150,
  roleWeights: { sentinel: 1.5, inspector: 1.5 },
  defaultRoleWeight: 1.0,
  prior: { success: 1, failure: 1 },
  evidence: { halfLife: 3 },
  tokenizer: { encoding: 'cl100k_base', margin: 1 },
  embeddings: {},
  knowledge: { tags: [], budget: 1000, bdTimeoutMs: 400, sanitizeEveryMs: 60_000 },
};

/** config.json is a small settings file; anything larger is not read. */
export const CONFIG_CAP = 1024 * 1024;

/** Read `<dir>/config.json` over the defaults. A missing file is the defaults; a broken one is an input error. */
export function loadConfig(dir: string): Config {
  const raw = readSmallFile(join(dir, 'config.json'), CONFIG_CAP)?.toString('utf8');
  if (raw === undefined) return DEFAULT_CONFIG;
  let user: Record<string, any>;
  try {
    user = JSON.parse(raw);
  } catch (err) {
    throw new CairnError('input', `config.json is not valid JSON (${jsonErrorPlace(raw, err)}); using defaults`);
  }
  return mergeConfig(user);
}

export function mergeConfig(user: Record<string, any>): Config {
  const d = DEFAULT_CONFIG;
  const strings = (v: unknown, fallback: string[]) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase()) : fallback;
  const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback);
  const numbers = (v: unknown): Record<string, number> => {
    const out: Record<string, number> = {};
    if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'number' && x >= 0) out[k.toLowerCase()] = x;
    return out;
  };
  const budgets = user.budgets ?? {};
  const { adversarial: _a, other: _o, ...byRole } = budgets;
  return {
    roles: {
      adversarial: strings(user.roles?.adversarial, d.roles.adversarial),
      validator: strings(user.roles?.validator, d.roles.validator),
    },
    budgets: { adversarial: num(budgets.adversarial, d.budgets.adversarial), other: num(budgets.other, d.budgets.other), byRole: numbers(byRole) },
    reserve: num(user.reserve, d.reserve),
    minBlock: num(user.minBlock, d.minBlock),
    roleWeights: { ...d.roleWeights, ...numbers(user.roleWeights) }, // naming one role keeps the other defaults
    defaultRoleWeight: num(user.defaultRoleWeight, d.defaultRoleWeight),
    prior: { success: num(user.prior?.success, d.prior.success), failure: num(user.prior?.failure, d.prior.failure) },
    evidence: { halfLife: num(user.evidence?.halfLife, d.evidence.halfLife) || d.evidence.halfLife },
    tokenizer: {
      encoding: typeof user.tokenizer?.encoding === 'string' ? user.tokenizer.encoding : d.tokenizer.encoding,
      margin: num(user.tokenizer?.margin, d.tokenizer.margin) || 1,
    },
    embeddings: { command: typeof user.embeddings?.command === 'string' ? user.embeddings.command : undefined },
    knowledge: {
      tags: strings(user.knowledge?.tags, d.knowledge.tags),
      budget: num(user.knowledge?.budget, d.knowledge.budget),
      bdTimeoutMs: num(user.knowledge?.bdTimeoutMs, d.knowledge.bdTimeoutMs),
      sanitizeEveryMs: num(user.knowledge?.sanitizeEveryMs, d.knowledge.sanitizeEveryMs),
    },
  };
}

export function roleKind(config: Config, role: string): RoleKind {
  const r = role.toLowerCase();
  if (config.roles.adversarial.includes(r)) return 'adversarial';
  if (config.roles.validator.includes(r)) return 'validator';
  return 'other';
}

/** Roles whose patterns a role may borrow: the others of its kind (none for unrelated roles). */
export function sameKindRoles(config: Config, role: string): string[] {
  const kind = roleKind(config, role);
  if (kind === 'other') return [role.toLowerCase()];
  return config.roles[kind];
}

/** Every role config.json names: in a kind, with a budget or with a weight (duplicates kept). */
export function configuredRoles(config: Config): string[] {
  const { roles, budgets, roleWeights } = config;
  return [...roles.adversarial, ...roles.validator, ...Object.keys(budgets.byRole), ...Object.keys(roleWeights)];
}

export function roleWeight(config: Config, role: string): number {
  return config.roleWeights[role.toLowerCase()] ?? config.defaultRoleWeight;
}

export function roleBudget(config: Config, role: string): number {
  const r = role.toLowerCase();
  if (config.budgets.byRole[r] !== undefined) return config.budgets.byRole[r];
  return roleKind(config, r) === 'adversarial' ? config.budgets.adversarial : config.budgets.other;
}
