import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import { roleWeight } from '../store/config.js';
import { CairnError } from '../core/errors.js';
import { appliedPatternIds, findingPatternIds, judgedPatternIds, outcomeCounts, outcomeOf, patternRoles } from './queries.js';
import type { Database } from '../store/db.js';
import { appendEvents, patternDb } from '../events/log.js';

// outcome-score (SPEC §3.8, §3.9.2, §3.10.1): each pattern applied in the issue/run that no validator judged in
// it is graded once by the final result. Applied in a finding, it shaped the run (tested: a fail weighs half its
// role's weight, a pass its outcomeCredit); only echoed, a result moves its untested credit by one. A validator's
// verdict is the more specific evidence: a run fails for what it missed, not for what a kept finding caught.

const PATTERNS_PER_EVENT = 60;

export interface OutcomeReport {
  issue: string | null;
  run: string | null;
  result: 'pass' | 'fail';
  /** False when this issue/run was already graded: a repeat changes nothing. */
  applied: boolean;
  previous?: 'pass' | 'fail';
  patterns: { pattern: string; weight: number; tested: boolean; credit?: number }[];
}

export function scoreOutcome(store: Store, issue: string | null, run: string | null, resultText: string, dryRun = false): OutcomeReport {
  const result = resultText.trim().toLowerCase();
  if (result !== 'pass' && result !== 'fail') throw new CairnError('usage', `--result must be pass or fail, got '${resultText}'`);
  if (issue === null) throw new CairnError('usage', '--issue is required');
  const db = patternDb(store);
  const previous = outcomeOf(db, store.project, issue, run ?? '');
  if (previous) return { issue, run, result, applied: false, previous, patterns: [] };
  const judged = new Set(judgedPatternIds(db, store.project, issue, run ?? ''));
  const applied = patternRoles(
    db,
    store.project,
    appliedPatternIds(db, store.project, issue, run ?? '').filter((id) => !judged.has(id)),
  );
  const inFinding = new Set(findingPatternIds(db, store.project, issue, run ?? ''));
  const credit = result === 'pass' ? outcomeCredit(db, store.project) : 0;
  const patterns = applied.map((r) => {
    const tested = inFinding.has(r.id);
    return {
      pattern: r.id,
      weight: roleWeight(store.config, r.role),
      tested,
      ...(tested && credit > 0 ? { credit } : {}),
    };
  });
  if (!dryRun) {
    // Split over several events of one grading, so every event line stays small.
    const grading = randomBytes(8).toString('hex');
    const parts = patterns.length ? chunks(patterns, PATTERNS_PER_EVENT) : [[]];
    const { halfLife } = store.config.evidence;
    appendEvents(
      store,
      parts.map((part) => ({
        type: 'pattern.outcome' as const,
        issue,
        run,
        result,
        grading,
        patterns: part,
        halfLife,
      })),
    );
  }
  return { issue, run, result, applied: !dryRun, patterns };
}

/**
 * What a pass tells about an applied pattern: nothing where work always ships, a verdict's worth where half the
 * runs fail. Twice the project's smoothed failure rate, capped at 1.
 */
export function outcomeCredit(db: Database, project: string): number {
  const { total, failed } = outcomeCounts(db, project);
  return Math.round(Math.min(1, (2 * (failed + 1)) / (total + 2)) * 1000) / 1000;
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
