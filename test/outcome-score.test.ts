import { describe, it, expect, afterEach } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTestStore, run, tempProject, UNSCOPED } from './helpers.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { formatPatterns, recordInjection } from '../lib/patterns/format.js';
import { getPattern, type Pattern } from '../lib/patterns/queries.js';
import { patternId } from '../lib/core/ids.js';
import type { Store } from '../lib/store/store.js';
import { appendEvents, patternDb } from '../lib/events/log.js';
import { scoreOutcome } from '../lib/patterns/outcome.js';

// outcome-score (SPEC §3.8, §3.9.2, §3.10.1): when the pipeline ends, every pattern applied during the
// issue/run (echoed by the role it was injected into, or linked to a finding) is graded once by the
// result: applied in a finding, pass → success + 1 and tested credit as much as outcomes tell, fail →
// ignore weight + 0.5 × the pattern's role weight; only echoed, its untested credit one up or down.

const DAY0 = Date.parse('2025-05-01T08:00:00.000Z');
const iso = (day: number) => new Date(DAY0 + day * 86_400_000).toISOString();
const savedNow = process.env.CAIRN_NOW;
afterEach(() => {
  if (savedNow === undefined) delete process.env.CAIRN_NOW;
  else process.env.CAIRN_NOW = savedNow;
});

const TEXT = {
  auditor: 'Plans must name the migration rollback step', // weight 1.0
  sentinel: 'Never print bearer tokens in error messages', // weight 1.5
  inspector: 'Review comments must cite the line they are about', // weight 1.5
  lens: 'Reproductions should include the exact command that was run', // weight 1.0
  scribe: 'Release notes are grouped by customer-visible area', // never injected
} as const;
type Role = keyof typeof TEXT;

/** A role's deliberation in LED-7 that lists (echoes) these texts and, unless `raise` is false, raises a finding applying each. */
function echo(s: Store, role: Role, runId: string, texts: string[], raise = true): void {
  const findings = raise ? texts.map((summary, i) => ({ id: `F${i + 1}`, summary })) : [];
  const verdict = findings.length
    ? `\n<!-- jkz:verdict-json ${JSON.stringify({ verdict: 'FAIL', issues: findings, must_fix: [], false_positives: [] })} -->\n`
    : '';
  const text = `## Accumulated Patterns\n${texts.map((t) => `- ${t}`).join('\n')}\n${verdict}`;
  storeDeliberation(s, { text, role, issue: 'LED-7', run: runId, phase: null, iteration: 1, labels: [], files: [] });
}

/**
 * One pattern per role, learned on day 0 (optionally deprecated); then, on day 1, injections for
 * LED-7, each block echoed by the role it was injected into and applied in a finding.
 */
function project(opts: { deprecate?: Role[] } = {}): { root: string; ids: Record<Role, string> } {
  const root = tempProject();
  const s = openTestStore(root);
  process.env.CAIRN_NOW = iso(0);
  for (const role of Object.keys(TEXT) as Role[]) {
    storeDeliberation(s, {
      text: `## Accumulated Patterns\n- ${TEXT[role]}\n`,
      role,
      issue: 'LED-6',
      run: 'r1',
      phase: null,
      iteration: 1,
      labels: [],
      files: [],
    });
  }
  const ids = Object.fromEntries((Object.keys(TEXT) as Role[]).map((r) => [r, patternId(s.project, r, TEXT[r])])) as Record<Role, string>;
  for (const role of opts.deprecate ?? [])
    appendEvents(s, [{ type: 'pattern.deprecated', pattern: ids[role], reason: 'test', auto: false }]);
  process.env.CAIRN_NOW = iso(1);
  // r1: the auditor's block twice (auditor + sentinel, via cross-role), the lens's and the inspector's
  // blocks once each (lens + inspector, the validator kind). r2: the auditor's block only.
  for (const [role, runId] of [
    ['auditor', 'r1'],
    ['auditor', 'r1'],
    ['lens', 'r1'],
    ['auditor', 'r2'],
  ] as const) {
    const result = formatPatterns(s, {
      role,
      ...UNSCOPED,
      issue: 'LED-7',
      run: runId,
      exactTokens: false,
    });
    recordInjection(s, result, 'LED-7', runId);
  }
  echo(s, 'auditor', 'r1', [TEXT.auditor, TEXT.sentinel]);
  echo(s, 'lens', 'r1', [TEXT.lens, TEXT.inspector]);
  echo(s, 'auditor', 'r2', [TEXT.auditor, TEXT.sentinel]);
  s.close();
  return { root, ids };
}

function state(root: string): Record<string, Pick<Pattern, 'success_count' | 'ignore_count' | 'ignore_weight'>> {
  const s = openTestStore(root);
  const out: Record<string, Pick<Pattern, 'success_count' | 'ignore_count' | 'ignore_weight'>> = {};
  for (const role of Object.keys(TEXT) as Role[]) {
    const p = getPattern(patternDb(s), s.project, patternId(s.project, role, TEXT[role]))!;
    out[role] = { success_count: p.success_count, ignore_count: p.ignore_count, ignore_weight: p.ignore_weight };
  }
  s.close();
  return out;
}

const log = (root: string) => readFileSync(`${root}/.cairn/events.jsonl`);
const outcomeEvents = (root: string) =>
  log(root)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === 'pattern.outcome');
const score = (root: string, args: string[], day = 2) => run('outcome-score', args, { cwd: root, env: { CAIRN_NOW: iso(day) } });
const fresh = { success_count: 1, ignore_count: 0, ignore_weight: 0 };

describe('grading the patterns applied in an issue/run', () => {
  it('pass: every pattern applied in a finding of the run, of any role, gets one success, once; the first outcome tells fully (credit 1)', () => {
    const { root, ids } = project();
    const r = score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'pass', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('cairn outcome-score: LED-7/r1 pass: 4 applied pattern(s) graded\n');
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ issue: 'LED-7', run: 'r1', result: 'pass', applied: true });
    expect(report.patterns).toEqual(
      expect.arrayContaining([
        { pattern: ids.auditor, weight: 1, tested: true, credit: 1 },
        { pattern: ids.sentinel, weight: 1.5, tested: true, credit: 1 },
        { pattern: ids.inspector, weight: 1.5, tested: true, credit: 1 },
        { pattern: ids.lens, weight: 1, tested: true, credit: 1 },
      ]),
    );
    expect(report.patterns).toHaveLength(4); // the auditor block was injected twice: graded once
    // Each injected pattern: 1 (first sight) + 1. The scribe's was never injected.
    expect(state(root)).toEqual({
      auditor: { ...fresh, success_count: 2 },
      sentinel: { ...fresh, success_count: 2 },
      inspector: { ...fresh, success_count: 2 },
      lens: { ...fresh, success_count: 2 },
      scribe: fresh,
    });
    expect(outcomeEvents(root)).toEqual([
      expect.objectContaining({ ts: iso(2), issue: 'LED-7', run: 'r1', result: 'pass', patterns: report.patterns }),
    ]);
  });

  it('leaves out a pattern injected but never applied: it shaped nothing', () => {
    const root = tempProject();
    const s = openTestStore(root);
    process.env.CAIRN_NOW = iso(0);
    echo(s, 'auditor', 'r0', [TEXT.auditor, 'Webhooks must carry an idempotency key']);
    process.env.CAIRN_NOW = iso(1);
    recordInjection(
      s,
      formatPatterns(s, {
        role: 'auditor',
        ...UNSCOPED,
        issue: 'LED-7',
        run: 'r1',
        exactTokens: false,
      }),
      'LED-7',
      'r1',
    );
    echo(s, 'auditor', 'r1', [TEXT.auditor]); // the idempotency pattern was in the block, and ignored
    s.close();
    const report = JSON.parse(score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'pass', '--json']).stdout);
    const after = openTestStore(root);
    expect(report.patterns).toEqual([{ pattern: patternId(after.project, 'auditor', TEXT.auditor), weight: 1, tested: true, credit: 1 }]);
    expect(
      getPattern(patternDb(after), after.project, patternId(after.project, 'auditor', 'Webhooks must carry an idempotency key')),
    ).toMatchObject({ success_count: 1 });
  });

  it('leaves out a pattern dismissed as a false positive in that run: the pass did not vindicate it', () => {
    const { root, ids } = project();
    const s = openTestStore(root);
    appendEvents(s, [
      {
        type: 'pattern.ignored',
        pattern: ids.auditor,
        role: 'auditor',
        weight: 1,
        finding: 'A1',
        retract: false,
        issue: 'LED-7',
        run: 'r1',
      },
    ]);
    s.close();
    const report = JSON.parse(score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'pass', '--json']).stdout);
    expect(report.patterns.map((p: { pattern: string }) => p.pattern).sort()).toEqual([ids.sentinel, ids.inspector, ids.lens].sort());
    expect(state(root).auditor).toEqual({ success_count: 1, ignore_count: 1, ignore_weight: 1 });
  });

  it('fail: ignore weight + 0.5 × the pattern’s role weight (sentinel and inspector 1.5 → 0.75); ignore_count untouched', () => {
    const { root } = project();
    const r = score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'fail']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(state(root)).toEqual({
      auditor: { ...fresh, ignore_weight: 0.5 },
      sentinel: { ...fresh, ignore_weight: 0.75 }, // injected into the auditor's block, graded by its own role
      inspector: { ...fresh, ignore_weight: 0.75 },
      lens: { ...fresh, ignore_weight: 0.5 },
      scribe: fresh,
    });
  });

  it('is idempotent per (issue, run): a repeat, even with the other result, is reported and changes nothing', () => {
    const { root } = project();
    expect(score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'pass']).code).toBe(0);
    const before = log(root);
    const graded = state(root);
    for (const result of ['pass', 'fail']) {
      const r = score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', result, '--json'], 3);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("cairn outcome-score: LED-7/r1 was already graded 'pass'; nothing changed\n");
      expect(JSON.parse(r.stdout)).toEqual({
        issue: 'LED-7',
        run: 'r1',
        result,
        applied: false,
        previous: 'pass',
        patterns: [],
      });
      expect(log(root)).toEqual(before);
      expect(state(root)).toEqual(graded);
    }
  });

  it('another run of the same issue is graded on its own', () => {
    const { root, ids } = project();
    score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'pass']);
    const r = score(root, ['--issue', 'LED-7', '--run', 'r2', '--result', 'fail', '--json']);
    expect(r.code).toBe(0);
    // r2 injected (and the auditor echoed) only the auditor's block: the auditor and the sentinel patterns.
    expect(JSON.parse(r.stdout).patterns).toEqual(
      [
        { pattern: ids.auditor, weight: 1, tested: true },
        { pattern: ids.sentinel, weight: 1.5, tested: true },
      ].sort((a, b) => (a.pattern < b.pattern ? -1 : 1)),
    );
    expect(state(root)).toEqual({
      auditor: { success_count: 2, ignore_count: 0, ignore_weight: 0.5 },
      sentinel: { success_count: 2, ignore_count: 0, ignore_weight: 0.75 },
      inspector: { ...fresh, success_count: 2 },
      lens: { ...fresh, success_count: 2 },
      scribe: fresh,
    });
    expect(outcomeEvents(root).map((e) => [e.run, e.result])).toEqual([
      ['r1', 'pass'],
      ['r2', 'fail'],
    ]);
  });

  it('a pattern only echoed shaped nothing an outcome can speak for: a pass or a fail moves its untested credit by one (SPEC §3.10.1)', () => {
    const root = tempProject();
    const s = openTestStore(root);
    process.env.CAIRN_NOW = iso(0);
    echo(s, 'auditor', 'r0', [TEXT.auditor], false);
    for (const [runId, result] of [
      ['r1', 'pass'],
      ['r2', 'fail'],
      ['r3', 'fail'],
    ] as const) {
      recordInjection(
        s,
        formatPatterns(s, {
          role: 'auditor',
          ...UNSCOPED,
          issue: 'LED-7',
          run: runId,
          exactTokens: false,
        }),
        'LED-7',
        runId,
      );
      echo(s, 'auditor', runId, [TEXT.auditor], false);
      s.close();
      const report = JSON.parse(score(root, ['--issue', 'LED-7', '--run', runId, '--result', result, '--json']).stdout);
      expect(report.patterns).toEqual([{ pattern: patternId(s.project, 'auditor', TEXT.auditor), weight: 1, tested: false }]);
    }
    const after = openTestStore(root);
    // first sight + the pass, then the two fails take one each back; never tested, never penalised
    expect(getPattern(patternDb(after), after.project, patternId(after.project, 'auditor', TEXT.auditor))).toMatchObject({
      success_count: 2,
      untested: 0,
      held: 0,
      ignore_weight: 0,
    });
  });

  it('leaves a pattern a validator judged in the run to that verdict: a run fails for what it missed, not for the defect its kept finding caught', () => {
    const { root, ids } = project();
    const s = openTestStore(root);
    process.env.CAIRN_NOW = iso(1.5);
    appendEvents(s, [{ type: 'pattern.reinforced', pattern: ids.auditor, issue: 'LED-7', run: 'r1', finding: 'F1' }]); // kept, behind the gate
    s.close();
    const report = JSON.parse(score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'fail', '--json']).stdout);
    expect(report.patterns.map((p: { pattern: string }) => p.pattern)).not.toContain(ids.auditor);
    expect(report.patterns).toHaveLength(3);
    expect(state(root).auditor).toEqual({ success_count: 2, ignore_count: 0, ignore_weight: 0 });
  });

  it('a pass counts as much as outcomes in the project tell: where every run ships, less and less', () => {
    const root = tempProject();
    const s = openTestStore(root);
    process.env.CAIRN_NOW = iso(0);
    echo(s, 'auditor', 'r0', [TEXT.auditor], false);
    const credits: number[] = [];
    for (let k = 1; k <= 6; k++) {
      recordInjection(
        s,
        formatPatterns(s, {
          role: 'auditor',
          ...UNSCOPED,
          issue: 'LED-7',
          run: `r${k}`,
          exactTokens: false,
        }),
        'LED-7',
        `r${k}`,
      );
      echo(s, 'auditor', `r${k}`, [TEXT.auditor]);
      credits.push(...scoreOutcome(s, 'LED-7', `r${k}`, 'pass').patterns.map((p) => p.credit ?? 0));
    }
    // twice the smoothed failure rate of the outcomes before: 2·1/2, 2·1/3, 2·1/4, …
    expect(credits).toEqual([1, 0.667, 0.5, 0.4, 0.333, 0.286]);
  });

  it('an issue graded without --run covers the injections made without --run', () => {
    const root = tempProject();
    const s = openTestStore(root);
    process.env.CAIRN_NOW = iso(0);
    storeDeliberation(s, {
      text: `## Accumulated Patterns\n- ${TEXT.auditor}\n`,
      role: 'auditor',
      issue: 'LED-6',
      run: null,
      phase: null,
      iteration: null,
      labels: [],
      files: [],
    });
    recordInjection(
      s,
      formatPatterns(s, {
        role: 'auditor',
        ...UNSCOPED,
        issue: 'LED-8',
        run: null,
        exactTokens: false,
      }),
      'LED-8',
      null,
    );
    storeDeliberation(s, {
      text: `## Accumulated Patterns\n- ${TEXT.auditor}\n`,
      role: 'auditor',
      issue: 'LED-8',
      run: null,
      phase: null,
      iteration: null,
      labels: [],
      files: [],
    });
    s.close();
    const r = score(root, ['--issue', 'LED-8', '--result', 'pass', '--json']);
    expect(r.stderr).toBe('cairn outcome-score: LED-8 pass: 1 applied pattern(s) graded\n');
    expect(JSON.parse(r.stdout)).toMatchObject({ issue: 'LED-8', run: null, applied: true, patterns: [{ weight: 1 }] });
    const after = openTestStore(root);
    expect(getPattern(patternDb(after), after.project, patternId(after.project, 'auditor', TEXT.auditor))).toMatchObject({
      success_count: 2,
    });
  });

  it('--dry-run reports what would be graded and writes nothing; the real run afterwards still grades', () => {
    const { root } = project();
    const before = log(root);
    const dry = score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'fail', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toBe('cairn outcome-score: LED-7/r1 fail: 4 applied pattern(s) would be graded\n');
    const report = JSON.parse(dry.stdout);
    expect(report).toMatchObject({ result: 'fail', applied: false });
    expect(report.patterns).toHaveLength(4);
    expect(report.previous).toBeUndefined();
    expect(log(root)).toEqual(before);
    const real = score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'fail', '--json']);
    expect(JSON.parse(real.stdout)).toMatchObject({ applied: true });
    expect(state(root).sentinel.ignore_weight).toBe(0.75);
  });

  it('deprecated patterns are never injected, so never graded', () => {
    const { root, ids } = project({ deprecate: ['sentinel'] });
    const r = score(root, ['--issue', 'LED-7', '--run', 'r1', '--result', 'fail', '--json']);
    const graded = JSON.parse(r.stdout).patterns.map((p: { pattern: string }) => p.pattern);
    expect(graded).not.toContain(ids.sentinel);
    expect(graded).toContain(ids.auditor);
    expect(state(root).sentinel).toEqual(fresh);
  });
});

describe('usage errors', () => {
  const cases: [string, string[], RegExp][] = [
    ['missing --issue', ['--run', 'r1', '--result', 'pass'], /^cairn outcome-score: skipped \(pipeline continues\): --issue is required/],
    ['missing --result', ['--issue', 'LED-7', '--run', 'r1'], /^cairn outcome-score: skipped \(pipeline continues\): --result is required/],
    [
      'a bad --result',
      ['--issue', 'LED-7', '--run', 'r1', '--result', 'maybe'],
      /^cairn outcome-score: skipped \(pipeline continues\): --result must be pass or fail, got 'maybe'/,
    ],
    [
      'an unknown flag',
      ['--issue', 'LED-7', '--run', 'r1', '--result', 'pass', '--bogus'],
      /^cairn outcome-score: skipped \(pipeline continues\): unknown flag --bogus/,
    ],
  ];
  for (const [name, args, message] of cases) {
    it(`${name}: one line on stderr, exit 0, nothing graded; exit 2 under --strict`, () => {
      const { root } = project();
      const before = log(root);
      const r = score(root, args);
      expect(r).toMatchObject({ code: 0, stdout: '' });
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(score(root, [...args, '--strict']).code).toBe(2);
      expect(log(root)).toEqual(before);
    });
  }
});

describe('a long grading', () => {
  it('is split over several events of one grading, each line under 4 KiB, and applied once', () => {
    const root = tempProject();
    const s = openTestStore(root);
    process.env.CAIRN_NOW = iso(0);
    const items = Array.from({ length: 130 }, (_, i) => `- Handler alpha${i} must check field beta${i} against gamma${i} before commit`);
    storeDeliberation(s, {
      text: `## Accumulated Patterns\n${items.join('\n')}\n`,
      role: 'auditor',
      issue: 'LED-8',
      run: 'r0',
      phase: null,
      iteration: 1,
      labels: [],
      files: [],
    });
    process.env.CAIRN_NOW = iso(1);
    const result = formatPatterns(s, {
      role: 'auditor',
      ...UNSCOPED,
      issue: 'LED-9',
      run: 'r1',
      budget: 100_000,
      exactTokens: false,
    });
    recordInjection(s, result, 'LED-9', 'r1');
    storeDeliberation(s, {
      text: `## Accumulated Patterns\n${items.join('\n')}\n`,
      role: 'auditor',
      issue: 'LED-9',
      run: 'r1',
      phase: null,
      iteration: 1,
      labels: [],
      files: [],
    });
    s.close();
    expect(result.patterns.length).toBe(130); // every line fits: all 130 injected (in two events), and echoed

    const r = score(root, ['--issue', 'LED-9', '--run', 'r1', '--result', 'pass', '--json']);
    expect(JSON.parse(r.stdout).patterns).toHaveLength(130);
    const events = outcomeEvents(root);
    expect(events).toHaveLength(3); // 60 + 60 + 10
    expect(new Set(events.map((e) => e.grading)).size).toBe(1);
    for (const line of log(root).toString('utf8').trim().split('\n')) expect(Buffer.byteLength(line)).toBeLessThan(4096);
    const after = openTestStore(root);
    const graded = result.patterns.map((p) => getPattern(patternDb(after), after.project, p.id)!.success_count);
    expect(graded.every((n) => n === 2)).toBe(true); // first sight + the pass, once
    after.close();
    expect(score(root, ['--issue', 'LED-9', '--run', 'r1', '--result', 'pass']).stderr).toMatch(/already graded/);
  });
});

describe('a file that is not JSON is named with the place it breaks, never quoted (processes)', () => {
  it("--report naming a password file: stderr, errors.log and the session start's degraded line hold none of it", () => {
    const root = tempProject();
    const shadow = join(tempProject(), 'shadow');
    writeFileSync(shadow, 'root:$6$SAltSaLt$Xyzzy0123456789abcdef:19000:0:99999:7:::\n');
    const r = run('outcome-score', ['--issue', 'LED-1', '--run', 'r1', '--result', 'pass', '--report', shadow], {
      cwd: root,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `cairn outcome-score: skipped (pipeline continues): the landing report (--report ${shadow}) is not valid JSON (line 1, column 1)\n`,
    );
    const errors = readFileSync(join(root, '.cairn', 'cache', 'errors.log'), 'utf8');
    const recall = run('auto-recall', ['--format', 'text'], {
      cwd: root,
      input: JSON.stringify({ hook_event_name: 'SessionStart', cwd: root, source: 'startup' }),
    });
    expect(recall.stdout).toContain('memory degraded since');
    for (const out of [r.stderr, errors, recall.stdout]) expect(out).not.toMatch(/root|\$6\$|SAlt|Xyzzy/);
  });

  it('a broken config.json: the warning and cairn doctor name the place, not what the file says', () => {
    const root = tempProject();
    writeFileSync(
      join(root, '.cairn', 'config.json'),
      '{"budgets": {"auditor": 900},\n  "embeddings": {"command": "deploy --token=hunter22secret" oops}}\n',
    );
    const r = run('format-patterns', ['--role', 'auditor', '--project', 'p1'], { cwd: root });
    const doctor = run('cairn', ['doctor', '--project', 'p1'], { cwd: root });
    expect(r.stderr).toContain('config.json is not valid JSON (line 2, column 61); using defaults');
    for (const out of [r.stderr, doctor.stdout, readFileSync(join(root, '.cairn', 'cache', 'errors.log'), 'utf8')])
      expect(out).not.toMatch(/hunter22|oops|deploy --token/);
  });
});
