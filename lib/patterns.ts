import type { Database } from './db.js';
import { CairnError } from './errors.js';
import { contentTokenSet, normaliseText } from './text.js';
import type { Category } from './events.js';
import { scorePattern, finalScore, SCORE_CUT, type ScoreContext, type ScoreFactors, type ScoredState } from './scoring.js';

// Reading pattern state. Every query names the project: no read can see another project's rows.

export interface Pattern extends ScoredState {
  project: string;
  id: string;
  text: string;
  ntok: number;
  sightings: number;
  was_validated: number;
  regressed: number;
  first_seen: string;
  issues: string[];
  promoted_by: string | null;
  reason: string | null;
}

export interface Ranked {
  pattern: Pattern;
  factors: ScoreFactors;
  relevance: number | undefined;
  score: number;
}

interface PatternRecord extends Omit<Pattern, 'labels' | 'files' | 'phases' | 'issues' | 'category'> {
  category: string;
  labels: string;
  files: string;
  phases: string;
  issues: string;
}

const COLUMNS = `project, id, role, text, ntok, category, success_count, ignore_count, ignore_weight, reinforcement_count, sightings,
  was_validated, regressed, lifecycle, first_seen, last_used, labels, files, phases, issues, promoted_by, reason`;

function toPattern(r: PatternRecord): Pattern {
  return {
    ...r,
    category: r.category as Category,
    labels: JSON.parse(r.labels),
    files: JSON.parse(r.files),
    phases: JSON.parse(r.phases),
    issues: JSON.parse(r.issues),
  };
}

export function getPattern(db: Database, project: string, id: string): Pattern | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM patterns WHERE project = ? AND id = ?`).get(project, id) as PatternRecord | undefined;
  return r && toPattern(r);
}

/** Patterns whose id starts with `prefix` (ids are long; people type the first few characters). */
export function findPatternsByIdPrefix(db: Database, project: string, prefix: string): Pattern[] {
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM patterns WHERE project = ? AND id >= ? AND id < ? ORDER BY id LIMIT 10`)
    .all(project, prefix, prefix + '\uffff') as PatternRecord[];
  return rows.map(toPattern);
}

export interface PatternFilter {
  roles?: string[];
  lifecycle?: string[];
  includeDeprecated?: boolean;
}

export function listPatterns(db: Database, project: string, filter: PatternFilter = {}): Pattern[] {
  const where = ['project = ?'];
  const params: unknown[] = [project];
  if (filter.roles?.length) {
    where.push(`role IN (${filter.roles.map(() => '?').join(', ')})`);
    params.push(...filter.roles);
  }
  if (filter.lifecycle?.length) {
    where.push(`lifecycle IN (${filter.lifecycle.map(() => '?').join(', ')})`);
    params.push(...filter.lifecycle);
  } else if (!filter.includeDeprecated) {
    where.push(`lifecycle != 'deprecated'`);
  }
  const rows = db.prepare(`SELECT ${COLUMNS} FROM patterns WHERE ${where.join(' AND ')}`).all(...params) as PatternRecord[];
  return rows.map(toPattern);
}

/** Score, cut below SCORE_CUT, and order best first (ties by id, so output is stable). */
export function rankPatterns(patterns: Pattern[], ctx: ScoreContext, relevance?: Map<string, number>): Ranked[] {
  const ranked: Ranked[] = [];
  for (const pattern of patterns) {
    const factors = scorePattern(pattern, ctx);
    const rel = relevance ? (relevance.get(pattern.id) ?? 0) : undefined;
    const score = finalScore(factors.base, rel);
    if (score >= SCORE_CUT) ranked.push({ pattern, factors, relevance: rel, score });
  }
  ranked.sort((a, b) => b.score - a.score || (a.pattern.id < b.pattern.id ? -1 : 1));
  return ranked;
}

/** Pattern ids injected into `role` for this issue/run (the attribution feedback and outcomes use). */
export function injectedPatternIds(db: Database, project: string, issue: string, run: string, role?: string): string[] {
  const rows = role
    ? db.prepare('SELECT DISTINCT pattern FROM injections WHERE project = ? AND issue = ? AND run = ? AND role = ?').all(project, issue, run, role)
    : db.prepare('SELECT DISTINCT pattern FROM injections WHERE project = ? AND issue = ? AND run = ?').all(project, issue, run);
  return (rows as { pattern: string }[]).map((r) => r.pattern);
}

export function dismissedPatternIds(db: Database, project: string, issue: string, run: string): Set<string> {
  const rows = db.prepare('SELECT pattern FROM dismissals WHERE project = ? AND issue = ? AND run = ?').all(project, issue, run) as { pattern: string }[];
  return new Set(rows.map((r) => r.pattern));
}

/** A pattern named by id, id prefix, or text (exact normalised, else the closest by token overlap). */
export function resolvePattern(db: Database, project: string, ref: string): Pattern {
  const exact = getPattern(db, project, ref);
  if (exact) return exact;
  if (/^p[0-9a-f]{3,15}$/.test(ref)) {
    const byPrefix = findPatternsByIdPrefix(db, project, ref);
    if (byPrefix.length === 1) return byPrefix[0];
    if (byPrefix.length > 1) throw new CairnError('usage', `'${ref}' matches ${byPrefix.length} patterns: ${byPrefix.map((p) => p.id).join(', ')}`);
  }
  const wanted = normaliseText(ref);
  const all = listPatterns(db, project, { includeDeprecated: true });
  const same = all.find((p) => normaliseText(p.text) === wanted);
  if (same) return same;
  // How much of what was typed the pattern covers, so a few remembered words find it.
  const tokens = contentTokenSet(ref);
  let best: Pattern | undefined;
  let bestScore = 0.6;
  for (const p of all) {
    const j = tokens.size ? intersectionSize(tokens, contentTokenSet(p.text)) / tokens.size : 0;
    if (j > bestScore) {
      best = p;
      bestScore = j;
    }
  }
  if (!best) throw new CairnError('not-found', `no pattern matches '${ref.slice(0, 80)}'`);
  return best;
}

function intersectionSize(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const t of a) if (b.has(t)) n++;
  return n;
}
