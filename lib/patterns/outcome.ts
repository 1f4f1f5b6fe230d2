import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import { roleWeight } from '../store/config.js';
import { CairnError } from '../core/errors.js';
import { appendEvents, patternDb } from '../events/log.js';

// outcome-score (SPEC §3.8): when the pipeline ends, every pattern injected during the issue/run is
// graded once by the final result: pass → a success; fail → ignore weight + 0.5 × its role's weight.
// Patterns dismissed as false positives in that run are left out: a pass did not vindicate them, and
// grading them would keep a false alarm dismissed in every run above the cut (SPEC §3.7).

const PATTERNS_PER_EVENT = 60;

export interface OutcomeReport {
  issue: string | null;
  run: string | null;
  result: 'pass' | 'fail';
  /** False when this issue/run was already graded: a repeat changes nothing. */
  applied: boolean;
  previous?: 'pass' | 'fail';
  patterns: { pattern: string; weight: number }[];
}

export function scoreOutcome(store: Store, issue: string | null, run: string | null, resultText: string, dryRun = false): OutcomeReport {
  const result = resultText.trim().toLowerCase();
  if (result !== 'pass' && result !== 'fail') throw new CairnError('usage', `--result must be pass or fail, got '${resultText}'`);
  if (issue === null) throw new CairnError('usage', '--issue is required');
  const db = patternDb(store);
  const prior = db.prepare('SELECT result FROM outcomes WHERE project = ? AND issue = ? AND run = ?').get(store.project, issue, run ?? '') as
    | { result: 'pass' | 'fail' }
    | undefined;
  if (prior) return { issue, run, result, applied: false, previous: prior.result, patterns: [] };
  const rows = db
    .prepare(
      `SELECT DISTINCT i.pattern, p.role FROM injections i JOIN patterns p ON p.project = i.project AND p.id = i.pattern
       WHERE i.project = ? AND i.issue = ? AND i.run = ?
         AND NOT EXISTS (SELECT 1 FROM dismissals d WHERE d.project = i.project AND d.issue = i.issue AND d.run = i.run AND d.pattern = i.pattern)
       ORDER BY i.pattern`,
    )
    .all(store.project, issue, run ?? '') as { pattern: string; role: string }[];
  const patterns = rows.map((r) => ({ pattern: r.pattern, weight: roleWeight(store.config, r.role) }));
  if (!dryRun) {
    // A long list is split over several events of one grading, so every event line stays small.
    const grading = randomBytes(8).toString('hex');
    const parts = patterns.length ? chunks(patterns, PATTERNS_PER_EVENT) : [[]];
    appendEvents(store, parts.map((part) => ({ type: 'pattern.outcome' as const, issue, run, result, grading, patterns: part })));
  }
  return { issue, run, result, applied: !dryRun, patterns };
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
