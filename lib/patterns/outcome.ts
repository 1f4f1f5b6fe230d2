import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';
import { roleWeight } from '../store/config.js';
import { CairnError } from '../core/errors.js';
import { appliedPatternIds, findingPatternIds, judgedPatternIds, outcomeCounts, outcomeOf, patternRoles } from './queries.js';
import type { Database } from '../store/db.js';
import { appendEvents, patternDb } from '../events/log.js';

// outcome-score (SPEC §3.8, §3.10.1; docs/internals.md): a pattern a validator judged in the run is left to it.

const PATTERNS_PER_EVENT = 60;

export interface OutcomeReport {
  issue: string | null;
  run: string | null;
  result: 'pass' | 'fail';
  /** False: graded already, a repeat changes nothing. */
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
    // several events of one grading, so every line stays small
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

/** A pass tells nothing where work always ships, a verdict's worth where half the runs fail. */
export function outcomeCredit(db: Database, project: string): number {
  const { total, failed } = outcomeCounts(db, project);
  return Math.round(Math.min(1, (2 * (failed + 1)) / (total + 2)) * 1000) / 1000;
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
