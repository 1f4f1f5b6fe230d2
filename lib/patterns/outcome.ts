import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import { roleWeight } from '../store/config.js';
import { CairnError } from '../core/errors.js';
import { appliedPatternIds, patternRoles } from './queries.js';
import { appendEvents, patternDb } from '../events/log.js';

// outcome-score (SPEC §3.8, §3.9.2): when the pipeline ends, every pattern applied in the issue/run
// (echoed by the role it was injected into, or linked to a finding) is graded once by the final
// result: pass → a success; fail → ignore weight + 0.5 × its role's weight. A pattern that was only
// injected shaped nothing, and one dismissed as a false positive was not vindicated by a pass.

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
  const applied = patternRoles(db, store.project, appliedPatternIds(db, store.project, issue, run ?? ''));
  const patterns = applied.map((r) => ({ pattern: r.id, weight: roleWeight(store.config, r.role) }));
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
