import type { Database } from '../store/db.js';
import { CairnError } from '../core/errors.js';
import { patternId } from '../core/ids.js';
import { lookupsReady, rankScores, roleLookups, type RankOptions, type Scored } from './index/index.js';
import type { Category } from '../events/types.js';
import { scorePattern, type ScoreFactors, type ScoredState } from './scoring.js';
import type { LedgerEntry } from '../events/credit.js';

// Every SQL read of the pattern loop, in one file on purpose (hence over 400 lines); each names the project.

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
  /** As counted; the score reads the evidence. */
  success_count: number;
  ignore_count: number;
}

export interface Ranked {
  pattern: Pattern;
  factors: ScoreFactors;
  relevance: number | undefined;
  score: number;
}

export interface PatternRecord extends Omit<Pattern, 'labels' | 'files' | 'phases' | 'issues' | 'category'> {
  category: string;
  labels: string;
  files: string;
  phases: string;
  issues: string;
}

export const COLUMNS = `project, id, role, text, ntok, category, success_count, ignore_count, ignore_weight,
  reinforcement_count, sightings, was_validated, regressed, lifecycle, first_seen, last_used, labels, files, phases,
  issues, promoted_by, reason, held, untested`;

export function toPattern(r: PatternRecord): Pattern {
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

/** People type the first few characters. */
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

/** In id order (SPEC §3.9.5). */
export function injectedPatternIds(db: Database, project: string, issue: string, run: string, role?: string): string[] {
  const rows = role
    ? db
        .prepare(
          `SELECT DISTINCT pattern FROM injections WHERE project = ? AND issue = ? AND run = ? AND role = ?
           ORDER BY pattern`,
        )
        .all(project, issue, run, role)
    : db
        .prepare('SELECT DISTINCT pattern FROM injections WHERE project = ? AND issue = ? AND run = ? ORDER BY pattern')
        .all(project, issue, run);
  return (rows as { pattern: string }[]).map((r) => r.pattern);
}

/** Any role, deprecated too, in id order. */
export function patternTexts(db: Database, project: string, ids: string[]): { id: string; text: string }[] {
  if (ids.length === 0) return [];
  return db
    .prepare(`SELECT id, text FROM patterns WHERE project = ? AND id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`)
    .all(project, ...ids) as { id: string; text: string }[];
}

/** Any role, deprecated too, in id order; any number of ids. */
export function patternsByIds(db: Database, project: string, ids: string[]): Pattern[] {
  const out: Pattern[] = [];
  const sorted = [...new Set(ids)].sort();
  for (let i = 0; i < sorted.length; i += 500) {
    const chunk = sorted.slice(i, i + 500);
    const marks = chunk.map(() => '?').join(', ');
    const sql = `SELECT ${COLUMNS} FROM patterns WHERE project = ? AND id IN (${marks}) ORDER BY id`;
    const rows = db.prepare(sql).all(project, ...chunk);
    out.push(...(rows as PatternRecord[]).map(toPattern));
  }
  return out;
}

export function lifecycleCounts(db: Database, project: string): Record<string, number> {
  const rows = db.prepare('SELECT lifecycle, COUNT(*) AS n FROM patterns WHERE project = ? GROUP BY lifecycle').all(project);
  return Object.fromEntries((rows as { lifecycle: string; n: number }[]).map((r) => [r.lifecycle, r.n]));
}

export function patternRoles(db: Database, project: string, ids: string[]): { id: string; role: string }[] {
  if (ids.length === 0) return [];
  return db
    .prepare(`SELECT id, role FROM patterns WHERE project = ? AND id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`)
    .all(project, ...ids) as { id: string; role: string }[];
}

/** At most two: enough to tell a unique one. */
export function roleIdsByPrefix(db: Database, project: string, role: string, prefix: string): string[] {
  const rows = db
    .prepare('SELECT id FROM patterns WHERE project = ? AND role = ? AND id >= ? AND id < ? ORDER BY id LIMIT 2')
    .all(project, role, prefix, prefix + '\uffff');
  return (rows as { id: string }[]).map((r) => r.id);
}

/** SPEC §3.9.2: echoed or linked to a finding; never those dismissed. */
export function appliedPatternIds(db: Database, project: string, issue: string, run: string, role?: string): string[] {
  const byRole = role === undefined ? '' : 'AND role = @role';
  const rows = db
    .prepare(
      `SELECT pattern FROM sightings WHERE project = @project AND issue = @issue AND run = @run ${byRole}
         AND added_success = 0
       UNION
       SELECT pattern FROM links WHERE project = @project AND issue = @issue AND run = @run ${byRole}
       EXCEPT
       SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run
       ORDER BY pattern`,
    )
    .all({ project, issue, run, ...(role === undefined ? {} : { role }) }) as { pattern: string }[];
  return rows.map((r) => r.pattern);
}

/** Linked to a finding not dismissed: tested there (SPEC §3.10.1). */
export function findingPatternIds(db: Database, project: string, issue: string, run: string): string[] {
  const rows = db
    .prepare(
      `SELECT pattern FROM links WHERE project = @project AND issue = @issue AND run = @run
       EXCEPT SELECT pattern FROM dismissals WHERE project = @project AND issue = @issue AND run = @run
       ORDER BY pattern`,
    )
    .all({ project, issue, run }) as { pattern: string }[];
  return rows.map((r) => r.pattern);
}

/** Oldest first. */
export function evidenceLedger(db: Database, project: string, pattern: string): LedgerEntry[] {
  return db
    .prepare('SELECT event, held, against, aging FROM evidence WHERE project = ? AND pattern = ? ORDER BY seq')
    .all(project, pattern) as LedgerEntry[];
}

export function judgedPatternIds(db: Database, project: string, issue: string, run: string): string[] {
  const rows = db
    .prepare("SELECT pattern FROM run_marks WHERE project = ? AND issue = ? AND run = ? AND kind = 'judged' ORDER BY pattern")
    .all(project, issue, run);
  return (rows as { pattern: string }[]).map((r) => r.pattern);
}

export interface StoredLink {
  patterns: string[];
  summary: string;
  match: string;
}

export function deliberationLinks(db: Database, project: string, deliberation: string): Map<string, StoredLink> {
  const rows = db
    .prepare(
      `SELECT finding, pattern, summary, match FROM links WHERE project = ? AND deliberation = ?
       ORDER BY finding, pattern`,
    )
    .all(project, deliberation) as { finding: string; pattern: string; summary: string; match: string }[];
  const out = new Map<string, StoredLink>();
  for (const r of rows) {
    const link = out.get(r.finding) ?? { patterns: [], summary: r.summary, match: r.match };
    link.patterns.push(r.pattern);
    out.set(r.finding, link);
  }
  return out;
}

export function dismissedPatternIds(db: Database, project: string, issue: string, run: string): Set<string> {
  const rows = db.prepare('SELECT pattern FROM dismissals WHERE project = ? AND issue = ? AND run = ?').all(project, issue, run) as {
    pattern: string;
  }[];
  return new Set(rows.map((r) => r.pattern));
}

/** Id, unique prefix, or exact text; several matches are listed, none chosen. */
export function resolvePattern(db: Database, project: string, ref: string): Pattern {
  const exact = getPattern(db, project, ref);
  if (exact) return exact;
  const describe = (list: Pattern[]) => list.map((p) => `${p.id} (${p.role}): ${p.text.slice(0, 60)}`).join('; ');
  if (/^p[0-9a-f]{3,15}$/.test(ref)) {
    const byPrefix = findPatternsByIdPrefix(db, project, ref);
    if (byPrefix.length === 1) return byPrefix[0];
    if (byPrefix.length > 1)
      throw new CairnError('usage', `'${ref}' matches ${byPrefix.length} patterns, nothing changed: ${describe(byPrefix)}`);
  }
  // an id hashes role and normalised text: an exact text is found by id, per role
  const roles = (db.prepare('SELECT DISTINCT role FROM patterns WHERE project = ? ORDER BY role').all(project) as { role: string }[]).map(
    (r) => r.role,
  );
  const same = roles.flatMap((role) => getPattern(db, project, patternId(project, role, ref)) ?? []);
  if (same.length === 1) return same[0];
  if (same.length > 1)
    throw new CairnError(
      'usage',
      `'${ref.slice(0, 80)}' is the text of ${same.length} patterns, nothing changed; ` + `name one by id: ${describe(same)}`,
    );
  const near = lookupsReady(db) ? roles.flatMap((role) => roleLookups(db, project, role).sharing(ref, 3)).slice(0, 3) : [];
  throw new CairnError(
    'not-found',
    `no pattern matches '${ref.slice(0, 80)}' by id or exact text, nothing changed` +
      (near.length ? ` (closest: ${near.map((p) => `${p.id}: ${p.text.slice(0, 60)}`).join('; ')})` : ''),
  );
}

/** In the scores' order, every factor spelled out. */
export function loadRanked(db: Database, project: string, scores: Scored[], opts: Pick<RankOptions, 'ctx' | 'relevance'>): Ranked[] {
  if (scores.length === 0) return [];
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM patterns WHERE project = ? AND id IN (${scores.map(() => '?').join(', ')})`)
    .all(project, ...scores.map((s) => s.id)) as PatternRecord[];
  const byId = new Map(rows.map((r) => [r.id, toPattern(r)]));
  return scores.map(({ id, score }) => {
    const pattern = byId.get(id)!;
    const relevance = opts.relevance ? (opts.relevance.get(id) ?? 0) : undefined;
    return { pattern, factors: scorePattern(pattern, opts.ctx), relevance, score };
  });
}

export function rankPatterns(db: Database, project: string, opts: RankOptions & { limit?: number }): Ranked[] {
  return loadRanked(db, project, rankScores(db, project, opts, { limit: opts.limit }).top, opts);
}

/** A summary's basis is stored with it. */
export function newestFirstSeen(db: Database, project: string, roles: string[]): string | undefined {
  const row = db
    .prepare(
      `SELECT MAX(first_seen) AS newest FROM patterns
       WHERE project = ? AND role IN (${roles.map(() => '?').join(', ')})`,
    )
    .get(project, ...roles) as { newest: string | null };
  return row.newest ?? undefined;
}

export function patternExists(db: Database, project: string): (id: string) => boolean {
  const exists = db.prepare('SELECT 1 FROM patterns WHERE project = ? AND id = ?');
  return (id) => exists.get(project, id) !== undefined;
}

export function storedRoles(db: Database, project: string): string[] {
  const rows = db
    .prepare('SELECT role FROM deliberations WHERE project = ? UNION SELECT role FROM patterns WHERE project = ?')
    .all(project, project);
  return (rows as { role: string }[]).map((r) => r.role);
}

export function deliberationWithText(
  db: Database,
  project: string,
  role: string,
  issue: string,
  run: string,
  hash: string,
): string | undefined {
  const row = db
    .prepare(
      `SELECT id FROM deliberations WHERE project = ? AND role = ? AND issue = ? AND run = ? AND text_hash = ?
       AND duplicate_of IS NULL LIMIT 1`,
    )
    .get(project, role, issue, run, hash) as { id: string } | undefined;
  return row?.id;
}

/** A repeat is not a new one. */
export function latestDeliberation(
  db: Database,
  project: string,
  role: string,
  issue: string,
  run: string,
): { id: string; files: string[] } | undefined {
  // rowid follows the log: a tie in ts goes to the later line, whatever its random id
  const row = db
    .prepare(
      `SELECT id, files FROM deliberations WHERE project = ? AND role = ? AND issue = ? AND run = ?
       AND duplicate_of IS NULL
       ORDER BY ts DESC, rowid DESC LIMIT 1`,
    )
    .get(project, role, issue, run) as { id: string; files: string } | undefined;
  return row && { id: row.id, files: JSON.parse(row.files) };
}

export function runMarks(db: Database, project: string, issue: string, run: string): { reinforced: Set<string>; aged: Set<string> } {
  const rows = db.prepare('SELECT pattern, kind FROM run_marks WHERE project = ? AND issue = ? AND run = ?').all(project, issue, run) as {
    pattern: string;
    kind: string;
  }[];
  return {
    reinforced: new Set(rows.filter((r) => r.kind === 'reinforced').map((r) => r.pattern)),
    aged: new Set(rows.filter((r) => r.kind === 'aged').map((r) => r.pattern)),
  };
}

/** A success not taken back. */
export function sightingAddedSuccess(db: Database, project: string, issue: string, run: string, pattern: string): boolean {
  const row = db
    .prepare(
      `SELECT 1 FROM sightings WHERE project = ? AND issue = ? AND run = ? AND pattern = ? AND added_success = 1
       AND retracted = 0 LIMIT 1`,
    )
    .get(project, issue, run, pattern);
  return row !== undefined;
}

export function storedSummary(
  db: Database,
  project: string,
  role: string,
): { basis: string; text: string; newest: string | null } | undefined {
  return db.prepare('SELECT basis, text, newest FROM summaries WHERE project = ? AND role = ?').get(project, role) as
    | { basis: string; text: string; newest: string | null }
    | undefined;
}

export function outcomeOf(db: Database, project: string, issue: string, run: string): 'pass' | 'fail' | undefined {
  const row = db.prepare('SELECT result FROM outcomes WHERE project = ? AND issue = ? AND run = ?').get(project, issue, run) as
    | { result: 'pass' | 'fail' }
    | undefined;
  return row?.result;
}

export function outcomeCounts(db: Database, project: string): { total: number; failed: number } {
  return db
    .prepare("SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE result = 'fail') AS failed FROM outcomes WHERE project = ?")
    .get(project) as {
    total: number;
    failed: number;
  };
}
