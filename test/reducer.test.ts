import { describe, it, expect } from 'vitest';
import { openTestStore, seededRandom, tempProject } from './helpers.js';
import { getPattern } from '../lib/patterns/queries.js';
import { listed, nextLifecycle } from '../lib/events/reducer.js';
import type { EventPayload } from '../lib/events/types.js';
import { appendEvents, patternDb, rebuildPatterns } from '../lib/events/log.js';

// The reducer applies every event, live and on replay. Two writers racing, or a log merged from
// two machines, can hold the same dismissal or outcome twice; it must count once.

type Observed = Extract<EventPayload, { type: 'pattern.observed' }>;
const observe = (run: string): Observed => ({
  type: 'pattern.observed',
  pattern: 'pabc',
  role: 'auditor',
  text: 'Every migration must be reversible',
  category: 'rule',
  issue: 'I-1',
  run,
  phase: 'plan',
  labels: [],
  files: [],
  deliberation: `d-${run}`,
});

describe('reducer', () => {
  it('counts a dismissal once per issue/run, however often it was recorded; each ages the one before (SPEC §3.10.2)', () => {
    const store = openTestStore(tempProject());
    const ignored = (run: string): EventPayload => ({
      type: 'pattern.ignored',
      pattern: 'pabc',
      role: 'auditor',
      weight: 1.5,
      finding: 'A1',
      retract: false,
      issue: 'I-1',
      run,
    });
    appendEvents(store, [observe('r1'), ignored('r1'), ignored('r1'), ignored('r2')]);
    const p = getPattern(patternDb(store), store.project, 'pabc')!;
    expect(p.ignore_count).toBe(2);
    expect(p.ignore_weight).toBeCloseTo(1.5 * 2 ** (-1 / 3) + 1.5, 12); // the default half-life: 3 verdicts
  });

  it('grades an issue/run once, even when two outcome events were recorded', () => {
    const store = openTestStore(tempProject());
    const outcome = (result: 'pass' | 'fail'): EventPayload => ({
      type: 'pattern.outcome',
      issue: 'I-1',
      run: 'r1',
      result,
      patterns: [{ pattern: 'pabc', weight: 1 }],
    });
    appendEvents(store, [observe('r1'), outcome('pass'), outcome('fail'), outcome('pass')]);
    const p = getPattern(patternDb(store), store.project, 'pabc')!;
    expect(p.success_count).toBe(2); // first sighting + one pass
    expect(p.ignore_weight).toBe(0); // the later fail was a repeat
  });

  it('applies every event of one grading (a long list split to keep lines small), and no other grading', () => {
    const store = openTestStore(tempProject());
    const other: EventPayload = { ...observe('r1'), pattern: 'pdef', text: 'Secrets never reach the logs' };
    const part = (grading: string, pattern: string): EventPayload => ({
      type: 'pattern.outcome',
      issue: 'I-1',
      run: 'r1',
      result: 'fail',
      grading,
      patterns: [{ pattern, weight: 1.5 }],
    });
    appendEvents(store, [observe('r1'), other, part('g1', 'pabc'), part('g1', 'pdef'), part('g2', 'pabc')]);
    expect(getPattern(patternDb(store), store.project, 'pabc')!.ignore_weight).toBe(0.75);
    expect(getPattern(patternDb(store), store.project, 'pdef')!.ignore_weight).toBe(0.75);
  });

  it("adds a new pattern's terms after every term row already indexed, live and on replay (issue 8: appends, not inserts at random)", () => {
    const store = openTestStore(tempProject());
    const texts = [
      'Every migration must be reversible',
      'Every migration must name its rollback',
      'Reversible migrations ship with a test',
    ];
    appendEvents(
      store,
      texts.map((text, i) => ({ ...observe('r1'), pattern: `p${i}`, text })),
    );
    const seqs = () =>
      patternDb(store)
        .prepare(
          'SELECT pattern, MIN(seq) AS low, MAX(seq) AS high, MIN(rowid) AS first FROM pattern_terms GROUP BY pattern ORDER BY pattern',
        )
        .all() as { pattern: string; low: number; high: number; first: number }[];
    const live = seqs();
    expect(live.map((r) => r.pattern)).toEqual(['p0', 'p1', 'p2']);
    for (const r of live) expect([r.low, r.high]).toEqual([r.first, r.first]); // one number per pattern: its first row
    expect(live[0].high).toBeLessThan(live[1].low);
    expect(live[1].high).toBeLessThan(live[2].low);
    rebuildPatterns(store);
    expect(seqs()).toEqual(live);
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
    const reinforced = (run: string): EventPayload => ({
      type: 'pattern.reinforced',
      pattern: 'pabc',
      issue: 'I-1',
      run,
      finding: 'A1',
    });
    appendEvents(store, [observe('r1'), reinforced('r1'), reinforced('r1'), reinforced('r2')]);
    expect(getPattern(patternDb(store), store.project, 'pabc')).toMatchObject({
      success_count: 3,
      reinforcement_count: 2,
    });
    const before = getPattern(patternDb(store), store.project, 'pabc')!.last_used;
    const aged = (run: string): EventPayload => ({ type: 'pattern.aged', pattern: 'pabc', issue: 'I-1', run });
    appendEvents(store, [aged('r3'), aged('r3')]);
    expect(before - getPattern(patternDb(store), store.project, 'pabc')!.last_used).toBe(86_400_000);
  });
});

describe('a deliberation stored twice for one issue/run (racing writers, a merged log)', () => {
  const stored = (deliberation: string, hash = 'h1', run = 'r1'): EventPayload => ({
    type: 'deliberation.stored',
    deliberation,
    role: 'auditor',
    issue: 'I-1',
    run,
    phase: null,
    iteration: 1,
    labels: [],
    files: [],
    verdict: null,
    evidence: 'L3',
    hash,
    size: 10,
    path: `artifacts/deliberations/${deliberation}.md`,
  });
  const seen = (deliberation: string, run = 'r1'): EventPayload => ({ ...observe(run), deliberation });
  const linked = (deliberation: string, run = 'r1'): EventPayload => ({
    type: 'finding.linked',
    deliberation,
    role: 'auditor',
    issue: 'I-1',
    run,
    finding: 'A1',
    summary: 'The 0042 migration has no down step',
    patterns: ['pabc'],
    match: 'text',
  });

  it('counts the first copy in the log; the later one and its sightings and links change nothing, live and on replay', () => {
    const store = openTestStore(tempProject());
    appendEvents(store, [stored('d-1'), seen('d-1'), linked('d-1'), stored('d-2'), seen('d-2'), linked('d-2')]);
    const live = getPattern(patternDb(store), store.project, 'pabc')!;
    expect(live).toMatchObject({ success_count: 1, sightings: 1 });
    expect(patternDb(store).prepare('SELECT id, duplicate_of FROM deliberations ORDER BY id').all()).toEqual([
      { id: 'd-1', duplicate_of: null },
      { id: 'd-2', duplicate_of: 'd-1' },
    ]);
    expect(patternDb(store).prepare('SELECT deliberation FROM links').all()).toEqual([{ deliberation: 'd-1' }]);
    rebuildPatterns(store);
    expect(getPattern(patternDb(store), store.project, 'pabc')).toEqual(live);
  });

  it('another text, or another run, is a deliberation of its own', () => {
    const store = openTestStore(tempProject());
    appendEvents(store, [stored('d-1'), seen('d-1'), stored('d-2', 'h2'), seen('d-2'), stored('d-3', 'h1', 'r2'), seen('d-3', 'r2')]);
    expect(getPattern(patternDb(store), store.project, 'pabc')).toMatchObject({ success_count: 3, sightings: 3 });
  });
});

describe('what the reducer accepts on replay (SPEC §3.2, §3.3)', () => {
  it('skips a line whose pattern text, role, issue or run is oversized, reporting it; the rest of the log applies', () => {
    const store = openTestStore(tempProject());
    const warnings: string[] = [];
    (store.log as { warn: (m: string) => void }).warn = (m) => warnings.push(m);
    appendEvents(store, [
      { ...observe('r1'), pattern: 'pbig', text: 'x'.repeat(1_000_000) },
      { ...observe('r1'), pattern: 'prole', role: 'r'.repeat(10_000) },
      { ...observe('r'.repeat(200)), pattern: 'prun' },
      observe('r1'),
    ]);
    expect(patternDb(store).prepare('SELECT id FROM patterns').all()).toEqual([{ id: 'pabc' }]);
    expect(warnings.join('\n')).toMatch(/text longer than 500 characters/);
    expect(warnings.join('\n')).toMatch(/role longer than 64 characters/);
    expect(warnings.join('\n')).toMatch(/run longer than 128 characters/);
  });
});

describe('a learned-context list read without parsing it', () => {
  it('says a value is listed only when it is an element, and for every plain value exactly when it is', () => {
    const rnd = seededRandom(29);
    const alphabet = ['a', 'b', 'cli', ',', ']', '[', '"', '\\', '\n', '\u0001', 'é', '日', ' ', '\ud800'];
    const word = () => Array.from({ length: Math.floor(rnd() * 4) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
    let plain = 0;
    for (let i = 0; i < 20_000; i++) {
      const list = Array.from({ length: Math.floor(rnd() * 5) }, word);
      const value = rnd() < 0.4 && list.length ? list[Math.floor(rnd() * list.length)] : word();
      const json = JSON.stringify(list);
      const found = listed(json, value);
      if (found) expect(list, `${json} ${JSON.stringify(value)}`).toContain(value);
      if (!/["\\\u0000-\u001f\ud800-\udfff]|^[,\]]/.test(value) && !json.includes('\\')) {
        plain++;
        expect(found, `${json} ${JSON.stringify(value)}`).toBe(list.includes(value));
      }
    }
    expect(plain).toBeGreaterThan(5_000);
  });
});
