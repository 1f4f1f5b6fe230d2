import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Deadline } from '../lib/core/deadline.js';
import { PatternHistory, readEvents } from '../lib/events/history.js';
import { tempDir } from './helpers.js';

// PatternHistory: what `cairn mcp`'s explain reads a pattern's events through. It must give what
// readEvents gives (the `cairn explain` reader) for every pattern, however the log changed since.

const P = 'historyproject';
let n = 0;
const line = (type: string, payload: Record<string, unknown>, project = P) =>
  JSON.stringify({
    v: 1,
    id: `01KM7XCQ80RSXABJ0VBY5${String(10000 + n).slice(-5)}`,
    ts: `2026-03-01T10:00:${String(n++ % 60).padStart(2, '0')}.000Z`,
    type,
    project,
    ...payload,
  }) + '\n';
const observed = (pattern: string) =>
  line('pattern.observed', {
    pattern,
    role: 'auditor',
    text: `rule ${pattern}`,
    category: 'rule',
    issue: 'I',
    run: 'r1',
  });
const NO_DEADLINE = new Deadline(0);

function same(history: PatternHistory, path: string, ids: string[]): void {
  for (const id of ids)
    expect(
      history.events(P, id, () => {}, NO_DEADLINE),
      id,
    ).toEqual(readEvents(path, { project: P, pattern: id }, () => {}));
}

describe('PatternHistory', () => {
  it("gives each pattern's events as readEvents does, as the log grows and when its prefix is rewritten", () => {
    const path = join(tempDir(), 'events.jsonl');
    writeFileSync(
      path,
      observed('pa') +
        observed('pb') +
        line('pattern.injected', {
          role: 'auditor',
          patterns: ['pa', 'pb'],
          path: 'full',
          tokens: 9,
          issue: 'I',
          run: 'r1',
        }) +
        line('pattern.outcome', { result: 'pass', patterns: [{ pattern: 'pb', weight: 1 }], issue: 'I', run: 'r1' }) +
        observed('pa').replace(P, 'otherproject') + // another project's line names pa too
        'not json\n',
    );
    const history = new PatternHistory(path);
    same(history, path, ['pa', 'pb', 'pc']);
    expect(history.events(P, 'pa', () => {}, NO_DEADLINE).map((e) => e.type)).toEqual(['pattern.observed', 'pattern.injected']);

    appendFileSync(
      path,
      line('pattern.ignored', {
        pattern: 'pa',
        role: 'auditor',
        weight: 1,
        finding: 'A1',
        retract: false,
        issue: 'I',
        run: 'r2',
      }) + observed('pc'),
    );
    same(history, path, ['pa', 'pb', 'pc']); // the appended lines are read

    writeFileSync(path, observed('pc') + observed('pd')); // a rewrite (a merge): started over
    same(history, path, ['pa', 'pb', 'pc', 'pd']);
    expect(history.events(P, 'pa', () => {}, NO_DEADLINE)).toEqual([]);
  });

  it('stops at its deadline with what it has indexed, and the next call goes on', () => {
    const path = join(tempDir(), 'events.jsonl');
    writeFileSync(path, Array.from({ length: 5000 }, (_, i) => observed(`p${i % 7}`)).join(''));
    const history = new PatternHistory(path);
    const passed = new Deadline(1, Date.now() - 1);
    expect(() => history.events(P, 'p3', () => {}, passed)).toThrow(/deadline/);
    same(history, path, ['p0', 'p3', 'p6']);
  });
});
