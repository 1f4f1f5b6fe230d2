import { describe, it, expect } from 'vitest';
import { openTestStore, tempProject } from './helpers.js';
import { getPattern } from '../lib/patterns/queries.js';
import { nextLifecycle } from '../lib/events/reducer.js';
import type { EventPayload } from '../lib/events/types.js';
import { appendEvents, patternDb } from '../lib/events/log.js';

// The reducer applies every event, live and on replay. Two writers racing, or a log merged from
// two machines, can hold the same dismissal or outcome twice; it must count once.

const observe = (run: string): EventPayload => ({
  type: 'pattern.observed', pattern: 'pabc', role: 'auditor', text: 'Every migration must be reversible', category: 'rule',
  issue: 'I-1', run, phase: 'plan', labels: [], files: [], deliberation: `d-${run}`,
});

describe('reducer', () => {
  it('counts a dismissal once per issue/run, however often it was recorded', () => {
    const store = openTestStore(tempProject());
    const ignored = (run: string): EventPayload => ({ type: 'pattern.ignored', pattern: 'pabc', role: 'auditor', weight: 1.5, finding: 'A1', retract: false, issue: 'I-1', run });
    appendEvents(store, [observe('r1'), ignored('r1'), ignored('r1'), ignored('r2')]);
    const p = getPattern(patternDb(store), store.project, 'pabc')!;
    expect(p.ignore_count).toBe(2);
    expect(p.ignore_weight).toBe(3);
  });

  it('grades an issue/run once, even when two outcome events were recorded', () => {
    const store = openTestStore(tempProject());
    const outcome = (result: 'pass' | 'fail'): EventPayload => ({ type: 'pattern.outcome', issue: 'I-1', run: 'r1', result, patterns: [{ pattern: 'pabc', weight: 1 }] });
    appendEvents(store, [observe('r1'), outcome('pass'), outcome('fail'), outcome('pass')]);
    const p = getPattern(patternDb(store), store.project, 'pabc')!;
    expect(p.success_count).toBe(2); // first sighting + one pass
    expect(p.ignore_weight).toBe(0); // the later fail was a repeat
  });

  it('applies every event of one grading (a long list split to keep lines small), and no other grading', () => {
    const store = openTestStore(tempProject());
    const other: EventPayload = { ...observe('r1'), pattern: 'pdef', text: 'Secrets never reach the logs' };
    const part = (grading: string, pattern: string): EventPayload => ({ type: 'pattern.outcome', issue: 'I-1', run: 'r1', result: 'fail', grading, patterns: [{ pattern, weight: 1.5 }] });
    appendEvents(store, [observe('r1'), other, part('g1', 'pabc'), part('g1', 'pdef'), part('g2', 'pabc')]);
    expect(getPattern(patternDb(store), store.project, 'pabc')!.ignore_weight).toBe(0.75);
    expect(getPattern(patternDb(store), store.project, 'pdef')!.ignore_weight).toBe(0.75);
  });

  it('moves lifecycle up only, and never past verified', () => {
    expect(nextLifecycle('observed', 1, 1)).toBe('observed');
    expect(nextLifecycle('observed', 2, 1)).toBe('candidate');
    expect(nextLifecycle('candidate', 3, 1)).toBe('candidate'); // one issue is not enough
    expect(nextLifecycle('candidate', 3, 2)).toBe('verified');
    expect(nextLifecycle('active', 1, 1)).toBe('active');
    expect(nextLifecycle('deprecated', 9, 9)).toBe('deprecated');
  });
});

describe('once per run', () => {
  it('reinforces and ages a pattern at most once per issue/run', () => {
    const store = openTestStore(tempProject());
    const reinforced = (run: string): EventPayload => ({ type: 'pattern.reinforced', pattern: 'pabc', issue: 'I-1', run });
    appendEvents(store, [observe('r1'), reinforced('r1'), reinforced('r1'), reinforced('r2')]);
    expect(getPattern(patternDb(store), store.project, 'pabc')).toMatchObject({ success_count: 3, reinforcement_count: 2 });
    const before = getPattern(patternDb(store), store.project, 'pabc')!.last_used;
    const aged = (run: string): EventPayload => ({ type: 'pattern.aged', pattern: 'pabc', issue: 'I-1', run });
    appendEvents(store, [aged('r3'), aged('r3')]);
    expect(before - getPattern(patternDb(store), store.project, 'pabc')!.last_used).toBe(86_400_000);
  });
});
