import { readSmallFile } from '../io/read.js';
import { jsonErrorPlace } from '../core/json.js';
import { join } from 'node:path';
import { CairnError } from '../core/errors.js';

export type RoleKind = 'adversarial' | 'validator' | 'other';

export interface Config {
  roles: { adversarial: string[]; validator: string[] };
  /** Per role kind, and per role name where set (SPEC §3.5). */
  budgets: { adversarial: number; other: number; byRole: Record<string, number> };
  /** Kept free with --remaining-tokens; the smallest useful block. */
  reserve: number;
  minBlock: number;
  /** An adversarial role's dismissal weight (SPEC §3.7). */
  roleWeights: Record<string, number>;
  defaultRoleWeight: number;
  /** SPEC §3.9.3 */
  prior: { success: number; failure: number };
  /** After this many newer verdicts an old one weighs half (SPEC §3.10.2). */
  evidence: { halfLife: number };
  tokenizer: { encoding: string; margin: number };
  embeddings: { command?: string };
  /** SPEC §4.1, §4.4: extra tag words, auto-recall's budget and bd wait. */
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

export const CONFIG_CAP = 1024 * 1024;

/** The loader takes a wrong value as the default (a hook must run on); doctor names it. */
interface Setting<T> {
  type: 'string' | 'number' | 'strings' | 'role map';
  read(value: unknown): T;
}
type Section = { [key: string]: Setting<unknown> | Section };
type Read<S> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : Read<S[K]> };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isPlainObject = (v: unknown): v is Record<string, unknown> => isObject(v) && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

const text = <T>(fallback: T): Setting<string | T> => ({
  type: 'string',
  read: (v) => (typeof v === 'string' ? v : fallback),
});
/** `zero`: what 0 reads as, where 0 would break (a half-life, a margin). */
const count = (fallback: number, zero = 0): Setting<number> => ({
  type: 'number',
  read: (v) => (isCount(v) ? v || zero : fallback),
});
const strings = (fallback: string[]): Setting<string[]> => ({
  type: 'strings',
  read: (v) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase()) : fallback),
});
/** Any role may be a key; names are lower-cased. */
const byRole = (v: unknown): Record<string, number> => {
  const out: Record<string, number> = {};
  if (isObject(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'number' && x >= 0) out[k.toLowerCase()] = x;
  return out;
};

const d = DEFAULT_CONFIG;
const SCHEMA = {
  project: text(undefined),
  roles: { adversarial: strings(d.roles.adversarial), validator: strings(d.roles.validator) },
  budgets: {
    type: 'role map',
    read: (v: unknown): Config['budgets'] => {
      const { adversarial, other, ...roles } = isObject(v) ? v : {};
      return {
        adversarial: count(d.budgets.adversarial).read(adversarial),
        other: count(d.budgets.other).read(other),
        byRole: byRole(roles),
      };
    },
  } as Setting<Config['budgets']>,
  reserve: count(d.reserve),
  minBlock: count(d.minBlock),
  // naming one role keeps the other defaults
  roleWeights: { type: 'role map', read: (v: unknown) => ({ ...d.roleWeights, ...byRole(v) }) } as Setting<Record<string, number>>,
  defaultRoleWeight: count(d.defaultRoleWeight),
  prior: { success: count(d.prior.success), failure: count(d.prior.failure) },
  evidence: { halfLife: count(d.evidence.halfLife, d.evidence.halfLife) },
  tokenizer: { encoding: text(d.tokenizer.encoding), margin: count(d.tokenizer.margin, 1) },
  embeddings: { command: text(undefined) },
  knowledge: {
    tags: strings(d.knowledge.tags),
    budget: count(d.knowledge.budget),
    bdTimeoutMs: count(d.knowledge.bdTimeoutMs),
    sanitizeEveryMs: count(d.knowledge.sanitizeEveryMs),
  },
} satisfies Section;

export interface ConfigProblem {
  setting: string;
  text: string;
  /** For an unknown setting, the names known beside it. */
  known?: string[];
  prefix: string;
}

const isSetting = (s: Setting<unknown> | Section): s is Setting<unknown> => typeof s.read === 'function';

/** A section that is not an object reads as empty. */
function readSection<S extends Section>(section: S, value: unknown): Read<S> {
  const given = isObject(value) ? value : {};
  return Object.fromEntries(
    Object.entries(section).map(([k, s]) => [k, isSetting(s) ? s.read(given[k]) : readSection(s, given[k])]),
  ) as Read<S>;
}

const WRONG_TYPE = {
  string: 'is not a string',
  number: 'is not a number ≥ 0',
  strings: 'is not a list of strings',
  'role map': 'is not an object of numbers by role',
};

function problemsIn(value: Record<string, unknown>, section: Section, prefix: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [key, v] of Object.entries(value)) {
    const name = `${prefix}${key}`;
    const s = Object.hasOwn(section, key) ? section[key] : undefined;
    const wrong = (what: string): ConfigProblem => ({ setting: name, text: `"${name}" ${what}`, prefix });
    if (s === undefined) problems.push({ setting: name, text: `unknown setting "${name}"`, known: Object.keys(section), prefix });
    else if (!isSetting(s)) problems.push(...(isPlainObject(v) ? problemsIn(v, s, `${name}.`) : [wrong('is not an object')]));
    else if (s.type === 'role map' && isPlainObject(v)) {
      problems.push(
        ...Object.entries(v)
          .filter(([, x]) => !isCount(x))
          .map(([role]) => ({ setting: `${name}.${role}`, text: `"${name}.${role}" is not a number ≥ 0`, prefix })),
      );
    } else if (!fits(s.type, v)) problems.push(wrong(WRONG_TYPE[s.type]));
  }
  return problems;
}

function fits(type: Setting<unknown>['type'], v: unknown): boolean {
  if (type === 'string') return typeof v === 'string';
  if (type === 'number') return isCount(v);
  if (type === 'strings') return Array.isArray(v) && v.every((x) => typeof x === 'string');
  return isPlainObject(v);
}

export function parseConfig(raw: unknown): { config: Config; problems: ConfigProblem[] } {
  const { project: _recordedId, ...settings } = readSection(SCHEMA, raw);
  const config: Config = settings; // the schema reads every setting of a Config
  const problems = isPlainObject(raw) ? problemsIn(raw, SCHEMA, '') : [{ setting: '', text: 'it is not a JSON object', prefix: '' }];
  return { config, problems };
}

/** Undefined when there is none; not JSON: an input error. */
export function readConfigFile(dir: string): { config: Config; problems: ConfigProblem[] } | undefined {
  const raw = readSmallFile(join(dir, 'config.json'), CONFIG_CAP)?.toString('utf8');
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new CairnError('input', `config.json is not valid JSON (${jsonErrorPlace(raw, err)}); using defaults`);
  }
  return parseConfig(value);
}

export function loadConfig(dir: string): Config {
  return readConfigFile(dir)?.config ?? DEFAULT_CONFIG;
}

export function roleKind(config: Config, role: string): RoleKind {
  const r = role.toLowerCase();
  if (config.roles.adversarial.includes(r)) return 'adversarial';
  if (config.roles.validator.includes(r)) return 'validator';
  return 'other';
}

export function sameKindRoles(config: Config, role: string): string[] {
  const kind = roleKind(config, role);
  if (kind === 'other') return [role.toLowerCase()];
  return config.roles[kind];
}

/** Duplicates kept. */
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
