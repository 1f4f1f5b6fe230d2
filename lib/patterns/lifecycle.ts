import type { Store } from '../store/store.js';
import { CairnError } from '../core/errors.js';
import { nowMs } from '../core/clock.js';
import { getPattern, listPatterns, resolvePattern, type Pattern, type PatternFilter } from './queries.js';
import { scorePattern, type Prior, type ScoreFactors, type ScoredState } from './scoring.js';
import { testedRate } from '../events/credit.js';
import { trackRecord } from './block.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { appendEvents, patternDb } from '../events/log.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';

// Lifecycle beyond the automatic moves (SPEC §3.3 step 5, §3.4): only a person makes active.

export const LIFECYCLES = ['observed', 'candidate', 'verified', 'active', 'deprecated'] as const;

export const STALE_BASE = 0.05;
export const STALE_DAYS = 30;
export const DISMISSED_IGNORES = 3;
export const DISMISSED_RATE = 0.2;

/** SPEC §3.4. The dismissal rule reads tested evidence alone: the untested prior is no evidence (SPEC §3.10.1). */
export function autoDeprecationReason(p: ScoredState & { ignore_count: number }, now: number, prior: Prior): string | undefined {
  if (p.lifecycle === 'active' || p.lifecycle === 'deprecated') return undefined;
  const f = scorePattern(p, { now, role: p.role, prior });
  const tested = testedRate(p);
  const reasons: string[] = [];
  if (f.base < STALE_BASE && f.days >= STALE_DAYS) {
    reasons.push(`stale: score ${f.base.toFixed(4)} < ${STALE_BASE} and unused for ${Math.floor(f.days)} days (≥ ${STALE_DAYS})`);
  }
  if (p.ignore_count >= DISMISSED_IGNORES && tested !== undefined && tested < DISMISSED_RATE) {
    reasons.push(
      `dismissed: ignored ${p.ignore_count}x (≥ ${DISMISSED_IGNORES}), ` +
        `${(tested * 100).toFixed(0)} % of its recent tested evidence held up (< ${DISMISSED_RATE * 100} %)`,
    );
  }
  return reasons.length ? `auto: ${reasons.join('; ')}` : undefined;
}

export interface Deprecation {
  pattern: Pattern;
  reason: string;
}

/** In one append. */
export function maintain(store: Store, dryRun = false, progress: Progress = NO_PROGRESS): Deprecation[] {
  const now = nowMs();
  const due: Deprecation[] = [];
  const patterns = listPatterns(patternDb(store), store.project);
  for (const [i, pattern] of patterns.entries()) {
    if (i % 256 === 0) progress(i, patterns.length);
    const reason = autoDeprecationReason(pattern, now, store.config.prior);
    if (reason) due.push({ pattern, reason });
  }
  due.sort((a, b) => (a.pattern.id < b.pattern.id ? -1 : 1));
  if (!dryRun)
    appendEvents(
      store,
      due.map((d) => ({ type: 'pattern.deprecated' as const, pattern: d.pattern.id, reason: d.reason, auto: true })),
    );
  return due;
}

export interface LifecycleChange {
  pattern: Pattern;
  changed: boolean;
}

/** SPEC §3.2 */
const MAX_NOTE = 500;

/** For the committed log: one line, sanitised (SPEC §4.6). */
function note(value: string, flag: string): string {
  const text = sanitizeUntrusted(value, { singleLine: true });
  if (!text) throw new CairnError('usage', `--${flag} is required`);
  if (text.length > MAX_NOTE) throw new CairnError('usage', `--${flag} is too long (${text.length} characters, at most ${MAX_NOTE})`);
  return text;
}

/** The only way to `active`; also brings a deprecated pattern back. */
export function promotePattern(store: Store, ref: string, by: string, reason: string): LifecycleChange {
  const event = { by: note(by, 'by'), reason: note(reason, 'reason') };
  const pattern = resolvePattern(patternDb(store), store.project, ref);
  if (pattern.lifecycle === 'active') return { pattern, changed: false };
  appendEvents(store, [{ type: 'pattern.promoted', pattern: pattern.id, ...event }]);
  return { pattern: getPattern(patternDb(store), store.project, pattern.id)!, changed: true };
}

export function deprecatePattern(store: Store, ref: string, reason: string): LifecycleChange {
  const why = note(reason, 'reason');
  const pattern = resolvePattern(patternDb(store), store.project, ref);
  if (pattern.lifecycle === 'deprecated') return { pattern, changed: false };
  appendEvents(store, [{ type: 'pattern.deprecated', pattern: pattern.id, reason: why, auto: false }]);
  return { pattern: getPattern(patternDb(store), store.project, pattern.id)!, changed: true };
}

export interface Listed {
  pattern: Pattern;
  factors: ScoreFactors;
  score: number;
  record: string;
}

export interface ListFilter {
  roles: string[];
  states: string[];
  regressions: boolean;
}

export function listScored(store: Store, filter: ListFilter): Listed[] {
  const unknown = filter.states.filter((s) => !(LIFECYCLES as readonly string[]).includes(s));
  if (unknown.length) throw new CairnError('usage', `unknown state ${unknown.join(', ')} (one of ${LIFECYCLES.join(', ')})`);
  const query: PatternFilter = { roles: filter.roles, lifecycle: filter.states };
  const now = nowMs();
  return listPatterns(patternDb(store), store.project, query)
    .filter((p) => !filter.regressions || p.regressed)
    .map((pattern) => {
      const factors = scorePattern(pattern, { now, role: pattern.role, prior: store.config.prior });
      return { pattern, factors, score: factors.base, record: trackRecord({ pattern, factors }) };
    })
    .sort((a, b) => b.score - a.score || (a.pattern.id < b.pattern.id ? -1 : 1));
}

/** Text last, so it never breaks the columns; sanitised (SPEC §4.6). RANK orders, RECORD is shown. */
export function renderList(rows: Listed[]): string[] {
  const shown = (text: string) => sanitizeUntrusted(text, { singleLine: true });
  const table = [
    ['ID', 'ROLE', 'STATE', 'RANK', 'SEEN', 'OK', 'IGN', 'REINF', 'RECORD', 'TEXT'],
    ...rows.map(({ pattern: p, score, record }) => [
      shown(p.id),
      shown(p.role),
      p.lifecycle + (p.regressed ? ' regressed' : ''),
      score.toFixed(3),
      String(p.sightings),
      formatCount(p.success_count),
      String(p.ignore_count),
      String(p.reinforcement_count),
      record,
      shown(p.text),
    ]),
  ];
  const widths = table[0].map((_, col) => Math.max(...table.map((row) => row[col].length)));
  return table.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]))).join('  '));
}

const formatCount = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
