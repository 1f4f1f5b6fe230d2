import { describe, it, expect, afterEach } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath, fixtureText, leakedSecrets, openTestStore, run, secretShapes, tempProject, UNSCOPED } from './helpers.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { formatPatterns, recordInjection } from '../lib/patterns/format.js';
import { runFeedback, type FeedbackInput, type FeedbackReport } from '../lib/patterns/feedback.js';
import { findingNamedByLine } from '../lib/patterns/finding-prose.js';
import { scoreOutcome } from '../lib/patterns/outcome.js';
import { getPattern, listPatterns, type Pattern } from '../lib/patterns/queries.js';
import { scorePattern } from '../lib/patterns/scoring.js';
import { patternId } from '../lib/core/ids.js';
import type { Store } from '../lib/store/store.js';
import { DAY_MS } from '../lib/core/clock.js';
import { appendEvents, patternDb } from '../lib/events/log.js';

// feedback-loop (SPEC §3.7, §3.9.2): a validator's verdict corrects the adversarial role's patterns
// through the links of the adversary's findings.

const DAY0 = Date.parse('2025-04-01T08:00:00.000Z');
const iso = (day: number) => new Date(DAY0 + day * DAY_MS).toISOString();

const savedNow = process.env.CAIRN_NOW;
afterEach(() => {
  if (savedNow === undefined) delete process.env.CAIRN_NOW;
  else process.env.CAIRN_NOW = savedNow;
});
/** Pin "now" for in-process calls. */
function now(day: number): void {
  process.env.CAIRN_NOW = iso(day);
}

// Patterns of the examples. None of them is a near-duplicate (Jaccard ≥ 0.8) of another.
const TOKENS = 'Never write raw session tokens to the debug log'; // rule
const MIGRATION = 'Schema migrations must be reversible with a tested down step'; // rule
const CHANGELOG = 'Every user-facing change gets a changelog entry'; // observation
const RETRIES = 'Network retries without jitter cause thundering herds'; // causal

interface FindingSpec {
  id: string;
  summary?: string;
  location?: string;
  fix_hint?: string;
  patterns?: string[];
}

/** An adversarial deliberation: Accumulated Patterns items, findings in a verdict block, an evidence level. */
function adversarial(
  opts: { items?: string[]; findings?: FindingSpec[]; evidence?: 'L1' | 'L3'; verdict?: 'PASS' | 'FAIL' | null } = {},
): string {
  const findings = opts.findings ?? [];
  const lines = ['# review', '', 'I looked at the change.', ''];
  if (opts.evidence === 'L1') lines.push('```', '$ npm test', 'Tests: 12 passed, 12 total', '```', '');
  if (opts.items?.length) lines.push('## Accumulated Patterns', '', ...opts.items.map((t) => `- ${t}`), '');
  if (opts.verdict !== null) {
    const verdict = opts.verdict ?? (findings.length ? 'FAIL' : 'PASS');
    lines.push(
      '## Verdict',
      '',
      `<!-- jkz:verdict-json ${JSON.stringify({ verdict, issues: findings, must_fix: findings.map((f) => f.id), false_positives: [] })} -->`,
    );
  }
  return lines.join('\n') + '\n';
}

/** The auditor with L1 output echoing both rules and raising TOKENS as A1. */
const RAISES_TOKENS = adversarial({ evidence: 'L1', items: [TOKENS, MIGRATION], findings: [{ id: 'A1', summary: TOKENS }] });

/** The auditor with L1 output echoing TOKENS and passing with one kept finding, A1. */
const echoTokensPassing = (summary: string) =>
  adversarial({ evidence: 'L1', items: [TOKENS], verdict: 'PASS', findings: [{ id: 'A1', summary }] });

/** A validator's text ending in its verdict-json block. */
function validator(v: { verdict?: string; must_fix?: unknown[]; false_positives?: unknown[] }): string {
  const block = {
    verdict: v.verdict ?? 'FAIL',
    issues: [],
    must_fix: v.must_fix ?? [],
    false_positives: v.false_positives ?? [],
  };
  return `# check\n\nI checked the findings.\n\n<!-- jkz:verdict-json ${JSON.stringify(block)} -->\n`;
}
/** A validator that dismisses `ids` and confirms something else, so it is a FAIL that reinforces nothing. */
const dismissing = (...ids: unknown[]) => validator({ verdict: 'FAIL', must_fix: ['X9'], false_positives: ids });

function store(
  s: Store,
  text: string,
  role = 'auditor',
  issue: string | null = 'LED-9',
  runId: string | null = 'r1',
  files: string[] = [],
) {
  return storeDeliberation(s, { text, role, issue, run: runId, phase: null, iteration: 1, labels: [], files });
}

function inject(s: Store, role: string, issue: string, runId: string, opts: { files?: string[] } = {}) {
  const result = formatPatterns(s, {
    role,
    issue,
    run: runId,
    labels: [],
    files: opts.files ?? [],
    phase: null,
    exactTokens: false,
  });
  recordInjection(s, result, issue, runId);
  return result.patterns.map((p) => p.id);
}

/** Day 0: the auditor lists TOKENS and MIGRATION in `issue` r0 (both learned); day 1: both are injected into r1. */
function learnedThenInjected(s: Store, issue: string): void {
  now(0);
  store(s, adversarial({ items: [TOKENS, MIGRATION] }), 'auditor', issue, 'r0');
  now(1);
  inject(s, 'auditor', issue, 'r1');
}

function feedback(s: Store, over: Partial<FeedbackInput>): FeedbackReport {
  return runFeedback(s, {
    adversarialRole: 'auditor',
    validatorRole: 'curator',
    issue: 'LED-9',
    run: 'r1',
    files: [],
    dryRun: false,
    ...over,
  });
}

const pid = (s: Store, text: string, role = 'auditor') => patternId(s.project, role, text);
const pat = (s: Store, text: string, role = 'auditor'): Pattern => {
  const p = getPattern(patternDb(s), s.project, pid(s, text, role));
  if (!p) throw new Error(`no pattern "${text}"`);
  return p;
};

/** Everything feedback could change: the log byte for byte, and the derived rows. */
function snapshot(root: string) {
  const s = openTestStore(root);
  const state = {
    log: readFileSync(s.eventsPath, 'utf8'),
    patterns: listPatterns(patternDb(s), s.project, { includeDeprecated: true }).sort((a, b) => (a.id < b.id ? -1 : 1)),
    dismissals: patternDb(s).prepare('SELECT * FROM dismissals ORDER BY pattern').all(),
    sightings: patternDb(s).prepare('SELECT * FROM sightings ORDER BY rowid').all(),
  };
  s.close();
  return state;
}

function events(root: string, type?: string): Record<string, any>[] {
  const s = openTestStore(root);
  const lines = readFileSync(s.eventsPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  s.close();
  return type ? lines.filter((e) => e.type === type) : lines;
}

const FEEDBACK_ARGS = ['--adversarial-role', 'auditor', '--validator-role', 'curator', '--issue', 'LED-9', '--run', 'r1'];

/** A project whose auditor raised A1 (TOKENS) and A2 (MIGRATION) in LED-9 r1, both learned as patterns. */
function seeded(): string {
  const root = tempProject();
  const s = openTestStore(root);
  now(0);
  store(
    s,
    adversarial({
      items: [TOKENS, MIGRATION],
      findings: [
        { id: 'A1', summary: TOKENS },
        { id: 'A2', summary: MIGRATION },
      ],
    }),
  );
  s.close();
  return root;
}

describe('bad verdicts: never a crash, never the wrong pattern', () => {
  const unchanged = (name: string, input: string | Buffer, expectStderr: RegExp, extraArgs: string[] = []) =>
    it(name, () => {
      const root = seeded();
      const before = snapshot(root);
      const r = run('feedback-loop', [...FEEDBACK_ARGS, ...extraArgs], {
        cwd: root,
        input,
        env: { CAIRN_NOW: iso(1) },
      });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(expectStderr);
      expect(r.stderr).not.toMatch(/TypeError|RangeError|at .*\.js:\d+/); // a message, not a stack
      expect(snapshot(root)).toEqual(before);
    });

  unchanged(
    'no verdict block: nothing to do',
    'Looks fine to me, ship it.\n',
    /^cairn feedback-loop: no valid verdict-json block: nothing to do$/m,
  );

  unchanged(
    'invalid JSON in the block is reported on stderr and treated as absent (A1 is named but not penalised)',
    '<!-- jkz:verdict-json {"verdict": "FAIL", "must_fix": ["A2"], "false_positives": ["A1"],} -->\n',
    /^cairn feedback-loop: verdict-json block at line 1 is not valid JSON .*\ncairn feedback-loop: .*no valid verdict-json block: nothing to do\n$/,
  );

  unchanged(
    'an unknown id is reported unmatched',
    dismissing('Z9'),
    /unmatched false positive Z9: no finding or line names Z9 in the auditor text/,
  );

  unchanged(
    'an empty false_positives list changes nothing',
    dismissing(),
    /FAIL: 0 penalised, 0 confirmed, 0 reinforced, 0 aged, 0 unmatched$/m,
  );

  unchanged(
    'false_positives that are not ids (objects, null, booleans) are ignored',
    dismissing({ id: 'A1' }, null, true, ''),
    /0 penalised, 0 confirmed, 0 reinforced, 0 aged, 0 unmatched/,
  );

  unchanged(
    'binary garbage on stdin fails open',
    randomBytes(64 * 1024),
    /^cairn feedback-loop: (skipped \(pipeline continues\): stdin (holds binary data|is not valid UTF-8)|no valid verdict-json block)/,
  );

  it('binary garbage as --validator-file fails open and changes nothing', () => {
    const root = seeded();
    const file = join(root, 'garbage.bin');
    writeFileSync(file, Buffer.concat([randomBytes(32 * 1024), Buffer.from('<!-- jkz:verdict-json {"verdict": '), randomBytes(1024)]));
    const before = snapshot(root);
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--validator-file', file], {
      cwd: root,
      env: { CAIRN_NOW: iso(1) },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cairn feedback-loop: /m);
    expect(snapshot(root)).toEqual(before);
  });

  it('an id whose finding matches no pattern is reported unmatched and nothing is penalised', () => {
    const root = seeded();
    // The adversarial text given on the command line has A9, about something no pattern speaks of.
    const file = join(root, 'auditor.md');
    writeFileSync(file, adversarial({ findings: [{ id: 'A9', summary: 'Quarterly revenue report uses the wrong fiscal calendar' }] }));
    const before = snapshot(root);
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--adversarial-file', file, '--json'], {
      cwd: root,
      input: dismissing('A9'),
      env: { CAIRN_NOW: iso(1) },
    });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.penalised).toEqual([]);
    expect(report.unmatched).toEqual([{ finding: 'A9', reason: 'A9 applies no auditor pattern' }]);
    expect(r.stderr).toMatch(/unmatched false positive A9/);
    expect(snapshot(root)).toEqual(before);
  });

  it('the same id twice (or in another case) is one dismissal', () => {
    const root = seeded();
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--json'], {
      cwd: root,
      input: dismissing('A1', 'A1', 'a1'),
      env: { CAIRN_NOW: iso(1) },
    });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.penalised).toHaveLength(1);
    expect(report.unmatched).toEqual([]);
    const ignored = events(root, 'pattern.ignored');
    expect(ignored).toHaveLength(1);
    const s = openTestStore(root);
    expect(ignored[0].pattern).toBe(pid(s, TOKENS));
    expect(pat(s, TOKENS)).toMatchObject({ ignore_count: 1, ignore_weight: 1 });
    expect(pat(s, MIGRATION)).toMatchObject({ ignore_count: 0, ignore_weight: 0, success_count: 1 });
  });

  it('a 5 MB validator text is read and its verdict applied once', () => {
    const root = seeded();
    const prose = 'The reviewer went through the change line by line and found nothing else of note.\n';
    const big = prose.repeat(Math.ceil((5 * 1024 * 1024) / prose.length)) + dismissing('A1');
    expect(Buffer.byteLength(big)).toBeGreaterThan(5 * 1024 * 1024);
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--json'], {
      cwd: root,
      input: big,
      env: { CAIRN_NOW: iso(1), CAIRN_DEADLINE_MS: '60000' },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).penalised).toEqual([expect.objectContaining({ finding: 'A1', match: 'text' })]);
    expect(events(root, 'pattern.ignored')).toHaveLength(1);
  });

  it('a 5 MB validator text without a block changes nothing', () => {
    const root = seeded();
    const before = snapshot(root);
    const r = run('feedback-loop', FEEDBACK_ARGS, {
      cwd: root,
      input: 'x'.repeat(5 * 1024 * 1024),
      env: { CAIRN_NOW: iso(1), CAIRN_DEADLINE_MS: '60000' },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/no valid verdict-json block/);
    expect(snapshot(root)).toEqual(before);
  });

  it('no validator text at all is an input error: exit 0, one line, nothing written (exit 1 under --strict)', () => {
    const root = seeded();
    const before = snapshot(root);
    const r = run('feedback-loop', FEEDBACK_ARGS, { cwd: root, env: { CAIRN_NOW: iso(1) } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cairn feedback-loop: skipped \(pipeline continues\): no curator text/);
    expect(run('feedback-loop', [...FEEDBACK_ARGS, '--strict'], { cwd: root }).code).toBe(1);
    expect(snapshot(root)).toEqual(before);
  });

  it('missing roles are usage errors (exit 2 under --strict)', () => {
    const root = seeded();
    const r = run('feedback-loop', ['--validator-role', 'curator'], { cwd: root, input: dismissing('A1') });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/--adversarial-role is required/);
    expect(run('feedback-loop', ['--validator-role', 'curator', '--strict'], { cwd: root, input: dismissing('A1') }).code).toBe(2);
    expect(events(root, 'pattern.ignored')).toEqual([]);
  });
});

describe('the penalty weight is the adversarial role’s', () => {
  const cases: [string, string, number][] = [
    ['sentinel', 'lens', 1.5],
    ['inspector', 'curator', 1.5],
    ['auditor', 'inspector', 1.0], // the validator's own weight (inspector 1.5) plays no part
    ['judge', 'sentinel', 1.0],
  ];
  for (const [adv, val, weight] of cases) {
    it(`${adv} checked by ${val}: ignore weight + ${weight}`, () => {
      const s = openTestStore(tempProject());
      now(0);
      store(s, adversarial({ items: [TOKENS], findings: [{ id: 'S1', summary: TOKENS }] }), adv);
      const report = feedback(s, { adversarialRole: adv, validatorRole: val, validatorText: dismissing('S1') });
      expect(report.penalised).toEqual([expect.objectContaining({ pattern: pid(s, TOKENS, adv), weight })]);
      expect(pat(s, TOKENS, adv)).toMatchObject({ ignore_count: 1, ignore_weight: weight });
    });
  }

  it('config.json roleWeights overrides the weight', () => {
    const root = tempProject();
    writeFileSync(join(root, '.cairn', 'config.json'), JSON.stringify({ roleWeights: { auditor: 2.5, sentinel: 1.5, inspector: 1.5 } }));
    const s = openTestStore(root);
    now(0);
    store(s, adversarial({ items: [TOKENS], findings: [{ id: 'A1', summary: TOKENS }] }));
    const report = feedback(s, { validatorRole: 'inspector', validatorText: dismissing('A1') });
    expect(report.penalised[0].weight).toBe(2.5);
    expect(pat(s, TOKENS)).toMatchObject({ ignore_count: 1, ignore_weight: 2.5 });
  });
});

describe('regression', () => {
  it('dismissing a validated pattern records pattern.regressed and warns `regression:` on stderr', () => {
    const root = tempProject();
    const s = openTestStore(root);
    learnedThenInjected(s, 'LED-9');
    // applied in a finding that an evidence-backed PASS let stand: tested, validated (SPEC §3.10.1)
    store(
      s,
      adversarial({ evidence: 'L1', items: [TOKENS], verdict: 'PASS', findings: [{ id: 'A1', summary: TOKENS }] }),
      'auditor',
      'LED-9',
      'r1',
    );
    const pass = feedback(s, { validatorText: validator({ verdict: 'PASS' }) });
    expect(pass.gate).toBe('reinforced');
    expect(pat(s, TOKENS).was_validated).toBe(1);
    // Next run, the auditor raises the validated pattern as a finding, and the curator dismisses it.
    now(2);
    store(s, adversarial({ findings: [{ id: 'A4', summary: TOKENS }] }), 'auditor', 'LED-9', 'r2');
    s.close();
    const r = run('feedback-loop', [...FEEDBACK_ARGS.slice(0, 6), '--run', 'r2', '--json'], {
      cwd: root,
      input: dismissing('A4'),
      env: { CAIRN_NOW: iso(2) },
    });
    expect(r.code).toBe(0);
    const id = patternId(openTestStore(root).project, 'auditor', TOKENS);
    expect(r.stderr).toContain(`cairn feedback-loop: regression: ${id} had been validated and was dismissed as a false positive (A4)`);
    expect(JSON.parse(r.stdout).penalised).toEqual([expect.objectContaining({ pattern: id, regressed: true })]);
    expect(events(root, 'pattern.regressed')).toEqual([expect.objectContaining({ pattern: id, finding: 'A4', issue: 'LED-9', run: 'r2' })]);
    const after = openTestStore(root);
    expect(pat(after, TOKENS)).toMatchObject({ regressed: 1, ignore_count: 1 });
    expect(pat(after, MIGRATION)).toMatchObject({ regressed: 0 });
  });

  it('dismissing a pattern that was never validated is no regression', () => {
    const root = seeded();
    const r = run('feedback-loop', FEEDBACK_ARGS, { cwd: root, input: dismissing('A1'), env: { CAIRN_NOW: iso(1) } });
    expect(r.stderr).not.toMatch(/regression:/);
    expect(events(root, 'pattern.regressed')).toEqual([]);
  });
});

describe('the evidence gate on PASS, and what a PASS credits (SPEC §3.9.2, §3.10.1)', () => {
  /**
   * Four auditor patterns, learned from deliberations about different files, all injected into LED-9 r1:
   * TOKENS and MIGRATION from src/db.ts, CHANGELOG from docs/CHANGES.md, RETRIES from src/net.ts
   * (decay-immune: confirmed by kept findings three times before, so success 1 + 3 = 4).
   */
  const ALL = [TOKENS, MIGRATION, CHANGELOG, RETRIES];
  function injectedFour() {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [TOKENS, MIGRATION] }), 'auditor', 'LED-8', 'r1', ['src/db.ts']);
    store(s, adversarial({ items: [CHANGELOG] }), 'auditor', 'LED-8', 'r1', ['docs/CHANGES.md']);
    store(s, adversarial({ items: [RETRIES] }), 'auditor', 'LED-8', 'r1', ['src/net.ts']);
    appendEvents(
      s,
      [1, 2, 3].map((n) => ({
        type: 'pattern.reinforced' as const,
        pattern: pid(s, RETRIES),
        issue: 'LED-7',
        run: `r${n}`,
        finding: 'A1',
      })),
    );
    now(1);
    const injected = inject(s, 'auditor', 'LED-9', 'r1');
    expect(injected.sort()).toEqual([TOKENS, MIGRATION, CHANGELOG, RETRIES].map((t) => pid(s, t)).sort());
    return s;
  }
  const counters = (p: Pattern) => ({
    s: p.success_count,
    r: p.reinforcement_count,
    v: p.was_validated,
    u: p.untested,
    last: p.last_used,
  });

  it('an L3 adversarial text reinforces nothing, however clear the PASS', () => {
    const s = injectedFour();
    store(s, adversarial({ evidence: 'L3' }), 'auditor', 'LED-9', 'r1');
    const before = readFileSync(s.eventsPath);
    const report = feedback(s, { validatorText: validator({ verdict: 'PASS' }) });
    expect(report).toMatchObject({
      effective: 'PASS',
      evidence: 'L3',
      gate: 'evidence-too-weak',
      reinforced: [],
      aged: [],
    });
    expect(readFileSync(s.eventsPath)).toEqual(before);
  });

  it('an L1 PASS credits every injected pattern the auditor only echoed as untested: success + 1, untested + 1, not validated, last_used = now', () => {
    const s = injectedFour();
    store(s, adversarial({ evidence: 'L1', items: ALL }), 'auditor', 'LED-9', 'r1');
    now(1.5);
    const report = feedback(s, { validatorText: validator({ verdict: 'PASS' }) });
    expect(report).toMatchObject({ gate: 'reinforced', evidence: 'L1', aged: [] });
    expect(report.reinforced.sort()).toEqual([TOKENS, MIGRATION, CHANGELOG, RETRIES].map((t) => pid(s, t)).sort());
    for (const t of [TOKENS, MIGRATION, CHANGELOG])
      expect(counters(pat(s, t))).toEqual({ s: 2, r: 0, v: 0, u: 2, last: DAY0 + 1.5 * DAY_MS });
    expect(counters(pat(s, RETRIES))).toEqual({ s: 5, r: 3, v: 1, u: 2, last: DAY0 + 1.5 * DAY_MS });
  });

  it('an L1 PASS that lets a finding stand tests the patterns that finding applied: reinforcement + 1, validated, held up (SPEC §3.10.1)', () => {
    const s = injectedFour();
    const text = echoTokensPassing(MIGRATION);
    store(s, text, 'auditor', 'LED-9', 'r1');
    now(1.5);
    feedback(s, { validatorText: validator({ verdict: 'PASS' }) });
    expect(counters(pat(s, MIGRATION))).toEqual({ s: 2, r: 1, v: 1, u: 1, last: DAY0 + 1.5 * DAY_MS });
    expect(pat(s, MIGRATION).held).toBe(1);
    expect(pat(s, TOKENS)).toMatchObject({ reinforcement_count: 0, held: 0, untested: 2 });
  });

  it('reinforces only the patterns the auditor applied (echoed or linked to a finding); the injected ones it ignored are aged a day', () => {
    const s = injectedFour();
    // TOKENS is echoed, CHANGELOG is what a (kept, non-blocking) finding applies; MIGRATION and RETRIES are ignored.
    const text = echoTokensPassing('The changelog has no entry for this user-facing change');
    const stored = store(s, text, 'auditor', 'LED-9', 'r1');
    expect(stored.links).toEqual([expect.objectContaining({ finding: 'A1', patterns: [pid(s, CHANGELOG)], match: 'text' })]);
    now(1.5);
    const report = feedback(s, { validatorText: validator({ verdict: 'PASS' }) });
    expect(report.reinforced.sort()).toEqual([pid(s, TOKENS), pid(s, CHANGELOG)].sort());
    expect(report.aged.sort()).toEqual([pid(s, MIGRATION), pid(s, RETRIES)].sort());
    expect(counters(pat(s, TOKENS))).toEqual({ s: 2, r: 0, v: 0, u: 2, last: DAY0 + 1.5 * DAY_MS }); // echoed: untested
    expect(counters(pat(s, CHANGELOG))).toEqual({ s: 2, r: 1, v: 1, u: 1, last: DAY0 + 1.5 * DAY_MS }); // its finding stood: tested
    // MIGRATION was last used when injected (day 1): aging moves it one day back, nothing else.
    expect(counters(pat(s, MIGRATION))).toEqual({ s: 1, r: 0, v: 0, u: 1, last: DAY0 });
  });

  it('--files narrows reinforcement to the applied patterns that learned those files', () => {
    const s = injectedFour();
    store(s, adversarial({ evidence: 'L1', items: ALL }), 'auditor', 'LED-9', 'r1');
    now(1.5);
    const report = feedback(s, { files: ['src/db.ts'], validatorText: validator({ verdict: 'PASS' }) });
    expect(report.reinforced.sort()).toEqual([pid(s, TOKENS), pid(s, MIGRATION)].sort());
    // Applied but about other files: neither reinforced nor aged (the auditor did use them).
    expect(report.aged).toEqual([]);
    expect(counters(pat(s, TOKENS))).toEqual({ s: 2, r: 0, v: 0, u: 2, last: DAY0 + 1.5 * DAY_MS });
    expect(counters(pat(s, CHANGELOG))).toEqual({ s: 1, r: 0, v: 0, u: 1, last: DAY0 + DAY_MS }); // touched by its echo
  });

  it('a decay-immune pattern (reinforced 3 times, or active) is left alone by aging', () => {
    const s = injectedFour();
    appendEvents(s, [{ type: 'pattern.promoted', pattern: pid(s, CHANGELOG), by: 'ana', reason: 'team rule' }]);
    store(s, adversarial({ evidence: 'L1', items: [TOKENS] }), 'auditor', 'LED-9', 'r1');
    const report = feedback(s, { validatorText: validator({ verdict: 'PASS' }) });
    expect(report.aged).toEqual(expect.arrayContaining([pid(s, CHANGELOG), pid(s, RETRIES)]));
    expect(pat(s, CHANGELOG).last_used).toBe(DAY0 + DAY_MS);
    expect(pat(s, RETRIES).last_used).toBe(DAY0 + DAY_MS);
  });

  it('a FAIL with an empty must_fix counts as PASS', () => {
    const s = injectedFour();
    store(s, adversarial({ evidence: 'L1', items: ALL }), 'auditor', 'LED-9', 'r1');
    const report = feedback(s, { validatorText: validator({ verdict: 'FAIL', must_fix: [] }) });
    expect(report).toMatchObject({ verdict: 'FAIL', effective: 'PASS', gate: 'reinforced' });
    expect(report.reinforced).toHaveLength(4);
  });

  it('a FAIL with must_fix reinforces and ages nothing', () => {
    const s = injectedFour();
    store(s, adversarial({ evidence: 'L1' }), 'auditor', 'LED-9', 'r1');
    const report = feedback(s, { validatorText: validator({ verdict: 'FAIL', must_fix: ['A1'] }) });
    expect(report).toMatchObject({ effective: 'FAIL', gate: 'not-a-pass', reinforced: [], aged: [] });
  });

  it('without an injection record, only the patterns its findings applied are reinforced (never "the top 5")', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [TOKENS, MIGRATION, CHANGELOG] }), 'auditor', 'LED-1', 'r0');
    now(1);
    const text = adversarial({
      evidence: 'L1',
      verdict: 'PASS',
      findings: [{ id: 'A1', summary: 'src/db.ts adds a migration without a tested down step' }],
    });
    const report = feedback(s, {
      issue: 'LED-2',
      run: 'r1',
      adversarialText: text,
      validatorText: validator({ verdict: 'PASS' }),
    });
    expect(report.gate).toBe('reinforced');
    expect(report.reinforced).toEqual([pid(s, MIGRATION)]);
    expect(report.aged).toEqual([]);
  });
});

describe('confirmed findings (SPEC §3.9.2)', () => {
  /** The openapi rule learned in LED-6; in LED-7 r1 the auditor raises A1 about the export endpoint, with the given evidence. */
  function raisedAbout(evidence: 'L1' | 'L3') {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [OPENAPI] }), 'auditor', 'LED-6', 'r1');
    now(1);
    inject(s, 'auditor', 'LED-7', 'r1');
    const stored = store(
      s,
      adversarial({
        evidence,
        items: [OPENAPI],
        findings: [{ id: 'A1', summary: 'The export endpoint is missing from docs/openapi.yaml' }],
      }),
      'auditor',
      'LED-7',
      'r1',
    );
    expect(stored.links).toEqual([expect.objectContaining({ finding: 'A1', patterns: [pid(s, OPENAPI)] })]);
    return s;
  }
  const OPENAPI = 'Every new HTTP endpoint must be documented in docs/openapi.yaml before merge';

  it('a finding the validator keeps (must_fix), with L1 evidence, reinforces the rule it applied', () => {
    const s = raisedAbout('L1');
    const report = feedback(s, { issue: 'LED-7', validatorText: validator({ verdict: 'FAIL', must_fix: ['A1'] }) });
    expect(report).toMatchObject({
      gate: 'not-a-pass',
      confirmed: [{ finding: 'A1', patterns: [pid(s, OPENAPI)], reinforced: true }],
      reinforced: [pid(s, OPENAPI)],
    });
    expect(pat(s, OPENAPI)).toMatchObject({ reinforcement_count: 1, was_validated: 1 });
    expect(events(s.location.root, 'pattern.reinforced')).toEqual([
      expect.objectContaining({ pattern: pid(s, OPENAPI), finding: 'A1', issue: 'LED-7' }),
    ]);
  });

  it('with L3 evidence it does not: the loop must not learn from narrative', () => {
    const s = raisedAbout('L3');
    const before = pat(s, OPENAPI);
    const report = feedback(s, { issue: 'LED-7', validatorText: validator({ verdict: 'FAIL', must_fix: ['A1'] }) });
    expect(report).toMatchObject({
      confirmed: [{ finding: 'A1', patterns: [pid(s, OPENAPI)], reinforced: false }],
      reinforced: [],
    });
    expect(pat(s, OPENAPI)).toEqual(before);
  });

  it('a finding the validator lists in its own issues counts as kept', () => {
    const s = raisedAbout('L1');
    const text = `<!-- jkz:verdict-json ${JSON.stringify({ verdict: 'FAIL', issues: [{ id: 'A1', summary: 'confirmed' }], must_fix: [], false_positives: [] })} -->`;
    expect(feedback(s, { issue: 'LED-7', validatorText: text }).reinforced).toEqual([pid(s, OPENAPI)]);
  });
});

describe('a dismissed finding reaches the patterns it applied (SPEC §3.9.1)', () => {
  const OPENAPI = 'Every new HTTP endpoint must be documented in docs/openapi.yaml before merge';
  const OPENAPI_FINDING = 'The export endpoint is missing from docs/openapi.yaml';

  it('through a cited short id, whatever the finding says', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [TOKENS, MIGRATION] }), 'auditor', 'LED-8', 'r1');
    now(1);
    const cited = `[${pid(s, MIGRATION).slice(0, 7)}] down step missing in 0042_add_due_date.sql`;
    const stored = store(
      s,
      adversarial({
        findings: [
          { id: 'A1', summary: cited },
          { id: 'A2', summary: 'Tokens again', patterns: [pid(s, TOKENS).slice(0, 9)] },
        ],
      }),
    );
    expect(stored.links.map((l) => [l.finding, l.patterns, l.match])).toEqual([
      ['A1', [pid(s, MIGRATION)], 'explicit'],
      ['A2', [pid(s, TOKENS)], 'explicit'],
    ]);
    expect(stored.links[0].summary).toBe('down step missing in 0042_add_due_date.sql');
    const report = feedback(s, { validatorText: dismissing('A1', 'A2') });
    expect(report.penalised.map((p) => [p.finding, p.pattern, p.match])).toEqual([
      ['A1', pid(s, MIGRATION), 'explicit'],
      ['A2', pid(s, TOKENS), 'explicit'],
    ]);
  });

  it('through its words: the finding about the concrete file lands on the rule, not on one sharing only common words', () => {
    const s = openTestStore(tempProject());
    now(0);
    const DOCS = 'Every new CLI flag must be documented in the man page before merge';
    store(s, adversarial({ items: [OPENAPI, DOCS, CHANGELOG] }), 'auditor', 'LED-8', 'r1');
    now(1);
    const stored = store(
      s,
      adversarial({
        findings: [
          {
            id: 'A1',
            summary: OPENAPI_FINDING,
            location: 'src/api/export.ts:12',
            fix_hint: 'Add the /export path to the OpenAPI file',
          },
        ],
      }),
    );
    expect(stored.links).toEqual([{ finding: 'A1', summary: OPENAPI_FINDING, patterns: [pid(s, OPENAPI)], match: 'text' }]);
    expect(stored.patterns).toEqual([]); // the summary is not a pattern of its own: it applies one
  });

  it('a finding that covers too little of any pattern states its own rule: stored as a pattern, and its dismissal lands there', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [MIGRATION] }), 'auditor', 'LED-8', 'r1');
    now(1);
    const stored = store(s, adversarial({ findings: [{ id: 'A1', summary: 'The schema change lacks an index' }] }));
    expect(stored.links).toEqual([
      expect.objectContaining({ finding: 'A1', match: 'self', patterns: [pid(s, 'The schema change lacks an index')] }),
    ]);
    const report = feedback(s, { validatorText: dismissing('A1') });
    expect(report.penalised).toEqual([
      expect.objectContaining({ pattern: pid(s, 'The schema change lacks an index'), match: 'self', retracted: true }),
    ]);
    expect(pat(s, MIGRATION).ignore_count).toBe(0);
  });

  // The fixture pairs of fixtures/deliberations/README.md: a finding summary that paraphrases one of
  // the deliberation's own Accumulated Patterns items. The adversarial text is given as a file, so
  // feedback-loop links it now, as store-deliberation would have.
  const PAIRS: [string, string, string, string, string][] = [
    [
      'led-101-r1-review-judge.md',
      'led-101-r1-review-inspector.md',
      'judge',
      'J1',
      'In JSON mode, spinners and progress lines must go to stderr, never to stdout',
    ],
    [
      'led-102-r1-review-judge.md',
      'led-102-r1-review-inspector.md',
      'judge',
      'J2',
      'New columns that queries filter on should get an index in the same migration',
    ],
    [
      'led-103-r1-review-judge.md',
      'led-103-r1-review-inspector.md',
      'judge',
      'J2',
      'every token-issuing endpoint needs a rate limit on the route or router',
    ],
    [
      'led-101-r1-qa-sentinel.md',
      'led-101-r1-qa-lens.md',
      'sentinel',
      'S2',
      'Untrusted strings echoed to a terminal must have control characters stripped or escaped',
    ],
    [
      'led-102-r1-qa-sentinel.md',
      'led-102-r1-qa-lens.md',
      'sentinel',
      'S2',
      'string-built SQL leads to injection, so every query must use bound parameters',
    ],
    [
      'led-103-r1-qa-sentinel.md',
      'led-103-r1-qa-lens.md',
      'sentinel',
      'S2',
      'Session cookies must always set HttpOnly, Secure and SameSite attributes',
    ],
  ];
  for (const [advFile, valFile, role, finding, item] of PAIRS) {
    it(`${valFile} dismissing ${finding} lands on the paraphrased item`, () => {
      const root = tempProject();
      const s = openTestStore(root);
      now(0);
      // Learn the items only (the verdict block removed), so the summary is not a pattern of its own.
      const withoutVerdict = fixtureText(advFile)
        .replace(/<!--[\s\S]*?-->/g, '')
        .replace(/```verdict-json[\s\S]*?```/g, '');
      store(s, withoutVerdict, role, 'LED-X', 'r1');
      s.close();
      const validatorRole = valFile.replace(/^.*-(\w+)\.md$/, '$1');
      const r = run(
        'feedback-loop',
        [
          '--adversarial-role',
          role,
          '--validator-role',
          validatorRole,
          '--issue',
          'LED-X',
          '--run',
          'r1',
          '--adversarial-file',
          fixturePath(advFile),
          '--validator-file',
          fixturePath(valFile),
          '--json',
        ],
        { cwd: root, env: { CAIRN_NOW: iso(1) } },
      );
      expect(r.code).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report.penalised).toEqual([
        {
          finding,
          pattern: patternId(openTestStore(root).project, role, item),
          text: item,
          match: 'text',
          weight: role === 'sentinel' ? 1.5 : 1,
          retracted: true,
          regressed: false,
        },
      ]);
      expect(report.unmatched).toEqual([]);
    });
  }

  it('without a verdict block in the adversarial text, the line naming the id is used (whole id, verdict lines skipped)', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [TOKENS, MIGRATION, CHANGELOG] }), 'auditor', 'LED-8', 'r1');
    const text = [
      '# audit',
      '<!-- an old note: verdict-json mentions A1 schema migrations here -->',
      '- A10: every user-facing change gets a changelog entry, and this one has none',
      '- **A1** — session tokens are written raw to the debug log in src/auth.ts',
    ].join('\n');
    expect(findingNamedByLine('A1', text)).toEqual({
      id: 'A1',
      summary: 'session tokens are written raw to the debug log in src/auth.ts',
    });
    const report = feedback(s, { adversarialText: text, validatorText: dismissing('A1') });
    expect(report.penalised).toEqual([expect.objectContaining({ finding: 'A1', pattern: pid(s, TOKENS), match: 'text' })]);
    expect(pat(s, CHANGELOG).ignore_count).toBe(0);
    expect(pat(s, MIGRATION).ignore_count).toBe(0);
  });
});

describe('--dry-run and --json', () => {
  it('--dry-run reports the plan and writes nothing', () => {
    const root = seeded();
    const s = openTestStore(root);
    now(0.5);
    inject(s, 'auditor', 'LED-9', 'r1');
    store(s, RAISES_TOKENS);
    s.close();
    const before = snapshot(root);
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--dry-run', '--json'], {
      cwd: root,
      input: validator({ verdict: 'PASS', false_positives: ['A1'] }),
      env: { CAIRN_NOW: iso(1) },
    });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const s2 = openTestStore(root);
    expect(report).toMatchObject({
      dry_run: true,
      gate: 'reinforced',
      penalised: [expect.objectContaining({ finding: 'A1', match: 'text' })],
      reinforced: [pid(s2, MIGRATION)],
    });
    const [t, m] = [pid(s2, TOKENS).slice(0, 7), pid(s2, MIGRATION).slice(0, 7)];
    expect(r.stderr).toContain(
      `PASS (L1): 1 would be penalised (A1→${t}), 0 confirmed, 1 would be reinforced (${m}), 0 would be aged, 0 unmatched`,
    );
    expect(snapshot(root)).toEqual(before);
  });

  it('--json prints the full account', () => {
    const root = seeded();
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--json'], {
      cwd: root,
      input: dismissing('A1', 'Z9'),
      env: { CAIRN_NOW: iso(1) },
    });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const id = patternId(openTestStore(root).project, 'auditor', TOKENS);
    expect(report).toEqual({
      verdict: 'FAIL',
      effective: 'FAIL',
      evidence: 'L3',
      problems: [],
      penalised: [{ finding: 'A1', pattern: id, text: TOKENS, match: 'text', weight: 1, retracted: true, regressed: false }],
      confirmed: [],
      unmatched: [{ finding: 'Z9', reason: 'no finding or line names Z9 in the auditor text' }],
      already_dismissed: [],
      deprecated: [],
      obsolete: [],
      gate: 'not-a-pass',
      reinforced: [],
      aged: [],
      dry_run: false,
    });
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('without --json, stdout stays empty and the summary is one stderr line', () => {
    const root = seeded();
    const r = run('feedback-loop', FEEDBACK_ARGS, { cwd: root, input: dismissing('A1'), env: { CAIRN_NOW: iso(1) } });
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const id = pid(openTestStore(root), TOKENS).slice(0, 7);
    expect(r.stderr).toBe(`cairn feedback-loop: FAIL: 1 penalised (A1→${id}), 0 confirmed, 0 reinforced, 0 aged, 0 unmatched\n`);
  });
});

describe('dismissals within a run', () => {
  /** CHANGELOG learned in r0 (one success), injected into r1, echoed there and raised as A1. */
  function echoedInR1() {
    const root = tempProject();
    const s = openTestStore(root);
    now(0);
    store(s, adversarial({ items: [CHANGELOG, MIGRATION] }), 'auditor', 'LED-9', 'r0');
    now(1);
    expect(inject(s, 'auditor', 'LED-9', 'r1')).toContain(pid(s, CHANGELOG));
    const stored = store(
      s,
      adversarial({
        items: [CHANGELOG],
        findings: [{ id: 'A1', summary: 'This user-facing change has no changelog entry' }],
      }),
      'auditor',
      'LED-9',
      'r1',
    );
    expect(stored.patterns).toEqual([expect.objectContaining({ id: pid(s, CHANGELOG), status: 'echo' })]);
    expect(stored.links).toEqual([expect.objectContaining({ finding: 'A1', patterns: [pid(s, CHANGELOG)] })]);
    return { root, s };
  }

  it('a dismissed pattern is not re-injected in the same issue/run, but may be in another run', () => {
    const { s } = echoedInR1();
    feedback(s, { validatorText: dismissing('A1') });
    // rate (1 + 1) / (1 + 1 + 2) = 0.5: still well above the cut…
    expect(pat(s, CHANGELOG)).toMatchObject({ success_count: 1, ignore_count: 1 });
    const again = formatPatterns(s, {
      role: 'auditor',
      ...UNSCOPED,
      issue: 'LED-9',
      run: 'r1',
      exactTokens: false,
    });
    expect(again.patterns.map((p) => p.id)).not.toContain(pid(s, CHANGELOG));
    expect(again.patterns.map((p) => p.id)).toContain(pid(s, MIGRATION));
    // …so a later run gets it again.
    const next = formatPatterns(s, {
      role: 'auditor',
      ...UNSCOPED,
      issue: 'LED-9',
      run: 'r2',
      exactTokens: false,
    });
    expect(next.patterns.map((p) => p.id)).toContain(pid(s, CHANGELOG));
  });

  it('echo rule: an injected pattern raised again adds no success, so its dismissal retracts nothing', () => {
    const { s } = echoedInR1();
    expect(pat(s, CHANGELOG)).toMatchObject({ success_count: 1, sightings: 1 });
    const report = feedback(s, { validatorText: dismissing('A1') });
    expect(report.penalised).toEqual([expect.objectContaining({ pattern: pid(s, CHANGELOG), retracted: false })]);
    expect(pat(s, CHANGELOG)).toMatchObject({ success_count: 1, ignore_count: 1, ignore_weight: 1 });
  });

  it('retracted success: a sighting that added a success in this run has it taken back', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [CHANGELOG] }), 'auditor', 'LED-9', 'r0');
    now(1);
    // Not injected in r1, so listing it again is a real sighting: success 1 → 2; A1 applies it.
    store(s, adversarial({ items: [CHANGELOG], findings: [{ id: 'A1', summary: CHANGELOG }] }), 'auditor', 'LED-9', 'r1');
    expect(pat(s, CHANGELOG)).toMatchObject({ success_count: 2, sightings: 2 });
    const report = feedback(s, { validatorText: dismissing('A1') });
    expect(report.penalised).toEqual([expect.objectContaining({ retracted: true })]);
    // The dismissed sighting is no success, nor a sighting that counts: 2 → 1; the r0 sighting stands.
    expect(pat(s, CHANGELOG)).toMatchObject({ success_count: 1, ignore_count: 1, sightings: 1 });
    const rows = patternDb(s)
      .prepare('SELECT run, added_success, retracted FROM sightings WHERE pattern = ? ORDER BY run')
      .all(pid(s, CHANGELOG));
    expect(rows).toEqual([
      { run: 'r0', added_success: 1, retracted: 0 },
      { run: 'r1', added_success: 1, retracted: 1 },
    ]);
  });

  it('no sighting in this run: nothing is retracted', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [CHANGELOG] }), 'auditor', 'LED-9', 'r0');
    now(1);
    // The r1 text is given, not stored: CHANGELOG has no sighting in r1.
    const report = feedback(s, {
      adversarialText: adversarial({ findings: [{ id: 'A1', summary: CHANGELOG }] }),
      validatorText: dismissing('A1'),
    });
    expect(report.penalised).toEqual([expect.objectContaining({ pattern: pid(s, CHANGELOG), retracted: false })]);
    expect(pat(s, CHANGELOG)).toMatchObject({ success_count: 1, ignore_count: 1 });
  });

  it('re-running feedback for the same issue/run does not penalise twice', () => {
    const root = seeded();
    const first = run('feedback-loop', [...FEEDBACK_ARGS, '--json'], {
      cwd: root,
      input: dismissing('A1'),
      env: { CAIRN_NOW: iso(1) },
    });
    expect(JSON.parse(first.stdout).penalised).toHaveLength(1);
    const log = readFileSync(join(root, '.cairn', 'events.jsonl'));
    const second = run('feedback-loop', [...FEEDBACK_ARGS, '--json'], {
      cwd: root,
      input: dismissing('A1'),
      env: { CAIRN_NOW: iso(1.1) },
    });
    expect(second.code).toBe(0);
    const report = JSON.parse(second.stdout);
    const s = openTestStore(root);
    expect(report).toMatchObject({ penalised: [], already_dismissed: [pid(s, TOKENS)] });
    expect(second.stderr).toMatch(/0 penalised, 0 confirmed, 0 reinforced, 0 aged, 0 unmatched, 1 already penalised in this run/);
    expect(readFileSync(join(root, '.cairn', 'events.jsonl'))).toEqual(log);
    expect(pat(s, TOKENS)).toMatchObject({ ignore_count: 1, ignore_weight: 1, success_count: 0 });
  });
});

describe('a false alarm raised and dismissed in every run, worded about the concrete change', () => {
  const OPENAPI = 'Every new HTTP endpoint must be documented in docs/openapi.yaml before merge';
  const ENDPOINTS = ['export', 'webhook', 'login', 'refund', 'invoice', 'customer', 'payment', 'report', 'search', 'session'];
  /** The auditor lists the rule and raises A1 about this run's endpoint, never in the rule's words. */
  const raising = (day: number) =>
    adversarial({
      items: [OPENAPI],
      findings: [
        {
          id: 'A1',
          summary: `The ${ENDPOINTS[day % ENDPOINTS.length]} endpoint is missing from docs/openapi.yaml`,
          fix_hint: 'Add the path to the spec',
        },
      ],
    });

  /** One run a day: format (inject), store the auditor raising it, the curator dismisses A1. The first day it is not injected. */
  function runDaily(s: Store, first: number, last: number): number | undefined {
    for (let day = first; day <= last; day++) {
      now(day);
      const injected = inject(s, 'auditor', 'LED-5', `r${day}`);
      if (!injected.includes(pid(s, OPENAPI))) return day;
      store(s, raising(day), 'auditor', 'LED-5', `r${day}`);
      feedback(s, { issue: 'LED-5', run: `r${day}`, validatorText: dismissing('A1') });
    }
    return undefined;
  }

  it('every dismissal lands on the rule, never on a one-off summary', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, raising(0), 'auditor', 'LED-5', 'r0');
    const report = feedback(s, { issue: 'LED-5', run: 'r0', validatorText: dismissing('A1') });
    expect(report.penalised).toEqual([expect.objectContaining({ pattern: pid(s, OPENAPI), match: 'text', retracted: true })]);
    expect(listPatterns(patternDb(s), s.project).map((p) => p.text)).toEqual([OPENAPI]);
  });

  it('dismissed from its first sighting, it is shown in the next block (unproven, not yet disproven) and gone after its third dismissal', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, raising(0), 'auditor', 'LED-5', 'r0');
    feedback(s, { issue: 'LED-5', run: 'r0', validatorText: dismissing('A1') });
    // Its one success was the dismissed sighting's: (0 + 1) / (0 + 1 + 2) = 1/3, a rule: score 0.43 × decay.
    expect(pat(s, OPENAPI)).toMatchObject({ success_count: 0, ignore_count: 1 });
    // Injected, echoed (no success) and dismissed on days 1–2; maintain's rule (≥ 3 ignores, observed
    // success rate < 0.2) retires it at the third dismissal: 0 of 3.
    expect(runDaily(s, 1, 20)).toBe(3);
    expect(pat(s, OPENAPI)).toMatchObject({ success_count: 0, ignore_count: 3, lifecycle: 'deprecated' });
  });

  it('with one earlier (untested) success, it is retired at its third dismissal (the cut alone would take twenty) and stays out', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [OPENAPI] }), 'auditor', 'LED-5', 'r0'); // learned, not dismissed: untested credit
    // Each day it is injected, echoed (no success) and dismissed (+1 ignore, nothing to retract). The
    // sighting tested nothing, so of its tested evidence none held up (SPEC §3.10.1): maintain's rule,
    // applied by feedback-loop to what it penalises, retires it at the third dismissal: injected on days 1–3, gone on day 4.
    expect(runDaily(s, 1, 30)).toBe(4);
    expect(pat(s, OPENAPI)).toMatchObject({ success_count: 1, ignore_count: 3, lifecycle: 'deprecated' });
    expect(pat(s, OPENAPI).ignore_weight).toBeCloseTo(1 + 2 ** (-1 / 3) + 2 ** (-2 / 3), 12);
    // Raised and dismissed every day after that, it never comes back: each listing is a real
    // sighting (not injected) whose success the dismissal takes back.
    for (let day = 6; day <= 16; day++) {
      now(day);
      expect(inject(s, 'auditor', 'LED-5', `x${day}`)).not.toContain(pid(s, OPENAPI));
      store(s, raising(day), 'auditor', 'LED-5', `x${day}`);
      feedback(s, { issue: 'LED-5', run: `x${day}`, validatorText: dismissing('A1') });
    }
    expect(pat(s, OPENAPI)).toMatchObject({ success_count: 1, ignore_count: 14, lifecycle: 'deprecated' });
  });
});

describe('the openapi case of issue 6, as a pipeline runs it (processes)', () => {
  const RULE = 'Every new HTTP endpoint must be documented in docs/openapi.yaml before merge';
  const RUNS = [
    ['LED-5', 'The export endpoint is missing from docs/openapi.yaml'],
    ['LED-6', 'The webhook endpoint has no entry in docs/openapi.yaml'],
    ['LED-7', 'The login endpoint is not listed in docs/openapi.yaml'],
  ];

  it('three paraphrased findings dismissed in three runs penalise the rule three times and retire it; no one-off summary is learned', () => {
    const root = tempProject();
    for (const [i, [issue, summary]] of RUNS.entries()) {
      const env = { CAIRN_NOW: iso(i) };
      const scope = ['--issue', issue, '--run', 'r1'];
      expect(run('format-patterns', ['--role', 'auditor', ...scope, '--strict'], { cwd: root, env }).code).toBe(0);
      const auditorText = adversarial({
        items: [RULE],
        findings: [{ id: 'A2', summary, location: 'src/api/routes.ts:40', fix_hint: 'Add the path and its schema' }],
      });
      expect(run('store-deliberation', ['--role', 'auditor', ...scope, '--strict'], { cwd: root, input: auditorText, env }).code).toBe(0);
      expect(
        run('store-deliberation', ['--role', 'curator', ...scope, '--strict'], {
          cwd: root,
          input: dismissing('A2'),
          env,
        }).code,
      ).toBe(0);
      const fb = run('feedback-loop', ['--adversarial-role', 'auditor', '--validator-role', 'curator', ...scope, '--json', '--strict'], {
        cwd: root,
        env,
      });
      expect(fb.code).toBe(0);
      expect(JSON.parse(fb.stdout).penalised).toEqual([expect.objectContaining({ finding: 'A2', text: RULE })]);
    }
    // Dismissed 3 times out of 3: retired (maintain's rule, applied as it is penalised); it never reached verified.
    const list = JSON.parse(
      run('cairn', ['list', '--state', 'observed,candidate,verified,deprecated', '--json', '--strict'], {
        cwd: root,
        env: { CAIRN_NOW: iso(3) },
      }).stdout,
    ).patterns;
    expect(list).toEqual([expect.objectContaining({ text: RULE, ignore_count: 3, success_count: 0, lifecycle: 'deprecated' })]);
    expect(run('format-patterns', ['--role', 'auditor', '--strict'], { cwd: root, env: { CAIRN_NOW: iso(3) } }).stdout).toBe('');
    const explain = run('cairn', ['explain', list[0].id, '--strict'], { cwd: root, env: { CAIRN_NOW: iso(3) } });
    expect(explain.stdout).toContain("dismissed in LED-7/r1 via finding A2: 'The login endpoint is not listed in docs/openapi.yaml'");
  });
});

describe('a re-run of the same feedback', () => {
  it('reinforces nothing a second time: one validation per run', () => {
    const s = openTestStore(tempProject());
    learnedThenInjected(s, 'LED-10');
    store(s, adversarial({ evidence: 'L1', items: [TOKENS, MIGRATION], findings: [] }), 'auditor', 'LED-10', 'r1');
    const pass = validator({ verdict: 'PASS' });
    expect(feedback(s, { issue: 'LED-10', run: 'r1', validatorText: pass }).reinforced).toHaveLength(2);
    const again = feedback(s, { issue: 'LED-10', run: 'r1', validatorText: pass });
    expect(again).toMatchObject({ gate: 'reinforced', reinforced: [], aged: [] });
    expect(pat(s, MIGRATION)).toMatchObject({ success_count: 2, untested: 2 }); // its sighting and one echoed PASS
  });
});

describe('a pattern dismissed in this run is never reinforced in it', () => {
  it('a later PASS of the same run (a re-run, or the next iteration) reinforces the others, not the dismissed one', () => {
    const s = openTestStore(tempProject());
    learnedThenInjected(s, 'LED-9');
    // Iteration 1: the auditor echoes both and raises TOKENS with L1 output; the curator dismisses it but confirms X9.
    store(s, RAISES_TOKENS);
    expect(feedback(s, { validatorText: dismissing('A1') }).penalised).toHaveLength(1);
    // Iteration 2: the curator passes the plan, repeating its dismissal of A1.
    const pass = feedback(s, { validatorText: validator({ verdict: 'PASS', false_positives: ['A1'] }) });
    expect(pass).toMatchObject({ gate: 'reinforced', penalised: [], alreadyDismissed: [pid(s, TOKENS)] });
    expect(pass.reinforced).toEqual([pid(s, MIGRATION)]);
    expect(pass.aged).toEqual([]);
    expect(pat(s, TOKENS)).toMatchObject({
      success_count: 1,
      ignore_count: 1,
      reinforcement_count: 0,
      was_validated: 0,
    });
    expect(pat(s, MIGRATION)).toMatchObject({ success_count: 2, untested: 2, reinforcement_count: 0 }); // echoed: untested credit
  });
});

describe('a stored deliberation named by the shared log', () => {
  const stored = (deliberation: string, path: string) => ({
    type: 'deliberation.stored' as const,
    deliberation,
    role: 'curator',
    issue: 'LED-66',
    run: 'r1',
    phase: null,
    iteration: null,
    labels: [],
    files: [],
    verdict: null,
    evidence: 'L3' as const,
    hash: 'x',
    size: 1,
    path,
  });
  const input = {
    adversarialRole: 'auditor',
    validatorRole: 'curator',
    issue: 'LED-66',
    run: 'r1',
    files: [],
    dryRun: false,
  };

  it('is read from its own artifact, whatever path the log line claims', () => {
    const root = tempProject();
    const s = openTestStore(root);
    const outside = join(root, 'outside.md');
    writeFileSync(outside, '<!-- jkz:verdict-json {"verdict":"FAIL","issues":[],"must_fix":["X1"],"false_positives":[]} -->');
    const id = 'd' + '0'.repeat(26);
    appendEvents(s, [stored(id, '../outside.md')]);
    expect(() => runFeedback(s, input)).toThrow(/curator deliberation d0+ is unreadable \(ENOENT\)/);
  });

  it('refuses an id that is not one cairn writes, so a crafted log line cannot point outside the store', () => {
    const s = openTestStore(tempProject());
    appendEvents(s, [stored('../../../etc/passwd', 'artifacts/deliberations/x.md')]);
    expect(() => runFeedback(s, input)).toThrow(/malformed id/);
  });
});

describe('credit from tested evidence, evidence that ages (SPEC §3.10)', () => {
  /**
   * TOKENS learned in LED-1; then in each of `passes` runs it is injected, echoed by an L1 auditor
   * text and the run passes: a PASS it was only echoed in and a passing outcome, both untested.
   */
  function riddenAlong(passes: number, s = openTestStore(tempProject())) {
    now(0);
    store(s, adversarial({ items: [TOKENS] }), 'auditor', 'LED-1', 'r1');
    for (let day = 1; day <= passes; day++) {
      now(day);
      const issue = `LED-${day + 1}`;
      inject(s, 'auditor', issue, 'r1');
      store(s, adversarial({ evidence: 'L1', items: [TOKENS] }), 'auditor', issue, 'r1');
      feedback(s, { issue, validatorText: validator({ verdict: 'PASS' }) });
      scoreOutcome(s, issue, 'r1', 'pass');
    }
    return s;
  }
  /** The auditor raises A1 about the debug log (it applies TOKENS) in `issue`; `call` is the curator's. */
  function raisedIn(s: Store, day: number, issue: string, call: 'dismiss' | 'keep') {
    now(day);
    inject(s, 'auditor', issue, 'r1');
    store(
      s,
      adversarial({
        evidence: 'L1',
        items: [TOKENS],
        findings: [{ id: 'A1', summary: 'src/auth.ts writes the raw session token to the debug log' }],
      }),
      'auditor',
      issue,
      'r1',
    );
    return feedback(s, {
      issue,
      validatorText: call === 'dismiss' ? dismissing('A1') : validator({ verdict: 'FAIL', must_fix: ['A1'] }),
    });
  }
  const rateOf = (s: Store, text: string) => scorePattern(pat(s, text), { now: Date.parse(process.env.CAIRN_NOW!), role: 'auditor' }).rate;

  it('riding along in passing runs earns a bounded untested credit: never above a pattern a validator kept once (ridden-along credit)', () => {
    const s = riddenAlong(10);
    expect(pat(s, TOKENS)).toMatchObject({
      success_count: 21,
      untested: 21,
      held: 0,
      reinforcement_count: 0,
      was_validated: 0,
    });
    now(11);
    store(s, adversarial({ evidence: 'L1', items: [MIGRATION], findings: [{ id: 'A1', summary: MIGRATION }] }), 'auditor', 'LED-40', 'r1');
    feedback(s, { issue: 'LED-40', validatorText: validator({ verdict: 'FAIL', must_fix: ['A1'] }) });
    expect(pat(s, MIGRATION)).toMatchObject({ held: 1, reinforcement_count: 1, was_validated: 1 });
    expect(rateOf(s, TOKENS)).toBeCloseTo(1.05 / 2.05, 12);
    expect(rateOf(s, TOKENS)).toBeLessThan(rateOf(s, MIGRATION));
    // the first test of the ridden-along pattern, a dismissal, takes it below an unproven first sighting
    raisedIn(s, 12, 'LED-41', 'dismiss');
    expect(rateOf(s, TOKENS)).toBeLessThan(0.5);
  });

  it('no single verdict protects a pattern: two wrong keeps, then dismissals, and it leaves within five (the wrong keep)', () => {
    const s = riddenAlong(3);
    raisedIn(s, 4, 'LED-50', 'keep');
    raisedIn(s, 5, 'LED-51', 'keep');
    expect(pat(s, TOKENS)).toMatchObject({ reinforcement_count: 2, was_validated: 1 });
    let deprecatedAt: number | undefined;
    for (let n = 1; n <= 5 && deprecatedAt === undefined; n++) {
      const report = raisedIn(s, 5 + n, `LED-${51 + n}`, 'dismiss');
      if (report.deprecated.includes(pid(s, TOKENS))) deprecatedAt = n;
    }
    expect(deprecatedAt).toBeDefined();
    expect(deprecatedAt!).toBeLessThanOrEqual(5);
    expect(pat(s, TOKENS).lifecycle).toBe('deprecated');
  });

  it('a proven rule survives an occasional wrong dismissal, and once it stops being true, dismissed every run, it leaves within 10 (the obsolete rule)', () => {
    const s = riddenAlong(1);
    for (let k = 0; k < 8; k++) raisedIn(s, 2 + k, `LED-${60 + k}`, 'keep');
    expect(pat(s, TOKENS)).toMatchObject({ reinforcement_count: 8, was_validated: 1 });
    const wrong = raisedIn(s, 10, 'LED-70', 'dismiss'); // the validator is wrong one time in ten
    expect(wrong.deprecated).toEqual([]);
    expect(rateOf(s, TOKENS)).toBeGreaterThan(0.6);
    for (let k = 0; k < 3; k++) raisedIn(s, 11 + k, `LED-${71 + k}`, 'keep');
    // from here on the rule no longer holds: dismissed every run
    let leftAt: number | undefined;
    for (let n = 1; n <= 10 && leftAt === undefined; n++) {
      const report = raisedIn(s, 13 + n, `LED-${80 + n}`, 'dismiss');
      if (report.deprecated.includes(pid(s, TOKENS))) leftAt = n;
      expect(report.obsolete).toEqual(leftAt === n ? [pid(s, TOKENS)] : []);
    }
    expect(leftAt).toBeDefined();
    expect(leftAt!).toBeLessThanOrEqual(10);
  });

  it('feedback-loop says when a proven rule starts being dismissed (regression:) and when it leaves (obsolete:) (process)', () => {
    const s = riddenAlong(1);
    for (let k = 0; k < 4; k++) raisedIn(s, 2 + k, `LED-${60 + k}`, 'keep');
    for (let n = 1; n <= 5; n++) raisedIn(s, 5 + n, `LED-${80 + n}`, 'dismiss');
    const root = s.location.root;
    s.close();
    now(12);
    const lines: string[] = [];
    for (let n = 6; n <= 10; n++) {
      const scope = ['--issue', `LED-${80 + n}`, '--run', 'r1'];
      const env = { CAIRN_NOW: iso(6 + n) };
      const auditorText = adversarial({
        evidence: 'L1',
        items: [TOKENS],
        findings: [{ id: 'A1', summary: 'src/auth.ts writes the raw session token to the debug log' }],
      });
      expect(run('store-deliberation', ['--role', 'auditor', ...scope, '--strict'], { cwd: root, input: auditorText, env }).code).toBe(0);
      const r = run('feedback-loop', ['--adversarial-role', 'auditor', '--validator-role', 'curator', ...scope, '--strict'], {
        cwd: root,
        input: dismissing('A1'),
        env,
      });
      expect(r.code, r.stderr).toBe(0);
      lines.push(...r.stderr.split('\n'));
      if (lines.some((l) => l.includes('obsolete:'))) break;
    }
    const id = pid(openTestStore(root), TOKENS);
    expect(lines).toContainEqual(
      expect.stringContaining(`cairn feedback-loop: regression: ${id} had been validated and was dismissed as a false positive (A1)`),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^cairn feedback-loop: obsolete: ${id} had held up and is now dismissed more often than not; deprecated`),
      ),
    );
  });

  it('cairn explain shows each piece of tested evidence with its weight then and now, and the untested credit (process)', () => {
    const s = riddenAlong(3);
    raisedIn(s, 4, 'LED-50', 'keep');
    raisedIn(s, 5, 'LED-51', 'dismiss');
    const root = s.location.root;
    const id = pid(s, TOKENS);
    s.close();
    const explain = run('cairn', ['explain', id, '--strict'], { cwd: root, env: { CAIRN_NOW: iso(5) } });
    const aged = 2 ** (-1 / 3);
    expect(explain.stdout).toContain(
      `evidence: held up ${aged.toFixed(2)}, against 1 (tested, recent verdicts weigh more; half-life 3 verdicts), untested 7 (counts 0.05)`,
    );
    expect(explain.stdout).toMatch(new RegExp(`confirmed in LED-50/r1 via finding A1: .*; weighs 1, now ${aged.toFixed(2)}`));
    expect(explain.stdout).toMatch(/dismissed in LED-51\/r1 via finding A1: .*; weighs -1, now -1/);
  });

  it('the record still counts every success, tested or not', () => {
    const s = riddenAlong(3);
    raisedIn(s, 4, 'LED-99', 'keep');
    expect(pat(s, TOKENS)).toMatchObject({ success_count: 8, ignore_count: 0, untested: 7, held: 1 });
  });

  it('a replay of the log gives every pattern the same credit as the live writes did', () => {
    const s = riddenAlong(3);
    raisedIn(s, 4, 'LED-99', 'dismiss');
    const live = pat(s, TOKENS);
    const root = s.location.root;
    s.close();
    expect(run('cairn', ['rebuild', '--strict'], { cwd: root }).code).toBe(0);
    const rebuilt = openTestStore(root);
    expect(getPattern(patternDb(rebuilt), rebuilt.project, live.id)).toEqual(live);
  });
});

describe("a dismissal read with the validator's reason", () => {
  // Two rules of the auditor's: a false alarm for this project (no man page) and a true check.
  const MAN_PAGE = 'Every new CLI flag must be documented in the man page before merge';
  const STATUS_JSON = 'The status command must keep its JSON output stable for scripts';
  // About the concrete change: its words are the true check's (status, JSON), not the man page rule's.
  const FINDING = {
    id: 'A1',
    summary: 'status --json gained a --verbose flag that nothing describes',
    location: 'src/status.ts:14',
    fix_hint: 'Describe --verbose',
  };
  const withReason = (reason: string) =>
    `# curator check\n\n**A1 — false positive.** ${reason}\n\n<!-- jkz:verdict-json ${JSON.stringify({ verdict: 'FAIL', issues: [], must_fix: ['X9'], false_positives: ['A1'] })} -->\n`;

  function raised(finding: FindingSpec = FINDING) {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [MAN_PAGE, STATUS_JSON] }), 'auditor', 'LED-8', 'r1');
    now(1);
    const stored = store(s, adversarial({ items: [MAN_PAGE, STATUS_JSON], findings: [finding] }));
    return { s, stored };
  }

  it("lands on the rule the reason names when the finding's own words led to another", () => {
    const { s, stored } = raised();
    expect(stored.links).toEqual([expect.objectContaining({ finding: 'A1', patterns: [pid(s, STATUS_JSON)], match: 'text' })]);
    const report = feedback(s, {
      validatorText: withReason('This does not apply here: ledgerly ships no man page; flags are documented in the help text.'),
    });
    expect(report.penalised).toEqual([expect.objectContaining({ finding: 'A1', pattern: pid(s, MAN_PAGE), match: 'reason' })]);
    expect(pat(s, STATUS_JSON).ignore_count).toBe(0);
    expect(events(s.location.root, 'pattern.ignored')).toEqual([
      expect.objectContaining({
        pattern: pid(s, MAN_PAGE),
        finding: 'A1',
        reason: 'false positive. This does not apply here: ledgerly ships no man page; flags are documented in the help text.',
      }),
    ]);
  });

  it("a reason that names no rule leaves the dismissal where the finding's words led", () => {
    const { s } = raised();
    const report = feedback(s, { validatorText: withReason('Not an issue for this change.') });
    expect(report.penalised).toEqual([expect.objectContaining({ pattern: pid(s, STATUS_JSON), match: 'text' })]);
    expect(events(s.location.root, 'pattern.ignored')[0]).not.toHaveProperty('reason');
  });

  it('a finding that cites its pattern keeps that link, whatever the reason says', () => {
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [MAN_PAGE, STATUS_JSON] }), 'auditor', 'LED-8', 'r1');
    now(1);
    store(s, adversarial({ findings: [{ ...FINDING, summary: `${FINDING.summary} [${pid(s, STATUS_JSON).slice(0, 8)}]` }] }));
    const report = feedback(s, {
      validatorText: withReason('ledgerly ships no man page; flags are documented in the help text.'),
    });
    expect(report.penalised).toEqual([expect.objectContaining({ pattern: pid(s, STATUS_JSON), match: 'explicit' })]);
  });

  it('a finding that was its own pattern is penalised beside the rule the reason reaches', () => {
    const { s, stored } = raised({ id: 'A1', summary: 'Nothing tells users about --verbose' });
    expect(stored.links).toEqual([expect.objectContaining({ match: 'self' })]);
    const report = feedback(s, {
      validatorText: withReason('ledgerly ships no man page; CLI flags are documented in the help text.'),
    });
    expect(report.penalised.map((p) => [p.pattern, p.match])).toEqual([
      [pid(s, 'Nothing tells users about --verbose'), 'self'],
      [pid(s, MAN_PAGE), 'reason'],
    ]);
  });

  it('a reason that names the rule that replaced the one applied does not move the dismissal off the pattern naming the finding’s identifiers (SPEC §3.10.5)', () => {
    const OLD = 'New routes must be registered in gateway/routes.yaml so the edge proxy forwards them';
    const NEW = 'Every new route must carry an @route annotation naming its owning team';
    const s = openTestStore(tempProject());
    now(0);
    store(s, adversarial({ items: [OLD, NEW] }), 'auditor', 'LED-8', 'r1');
    now(1);
    const finding = {
      id: 'A1',
      summary: 'The new geofence route is not registered in gateway/routes.yaml, so the edge proxy will not forward it',
    };
    store(s, adversarial({ items: [NEW], findings: [finding] }));
    const report = feedback(s, {
      validatorText: withReason(
        'gateway/routes.yaml was deleted when routing moved to annotations; the proxy discovers routes itself now.',
      ),
    });
    expect(report.penalised).toEqual([expect.objectContaining({ finding: 'A1', pattern: pid(s, OLD), match: 'text' })]);
    expect(pat(s, NEW).ignore_count).toBe(0);
  });

  it('explain shows the reason that led the dismissal to the rule (processes)', () => {
    const { s } = raised();
    const root = s.location.root;
    s.close();
    const r = run('feedback-loop', [...FEEDBACK_ARGS, '--json', '--strict'], {
      cwd: root,
      input: withReason('ledgerly ships no man page: flags are documented in --help.'),
      env: { CAIRN_NOW: iso(1) },
    });
    expect(r.code, r.stderr).toBe(0);
    const manPage = patternId(openTestStore(root).project, 'auditor', MAN_PAGE);
    expect(JSON.parse(r.stdout).penalised).toEqual([expect.objectContaining({ pattern: manPage, match: 'reason' })]);
    expect(r.stderr).toContain(`1 penalised (A1→${manPage.slice(0, 7)} by the reason)`);
    const explain = run('cairn', ['explain', manPage, '--strict'], { cwd: root, env: { CAIRN_NOW: iso(1) } });
    // the finding's link (to the other rule) is not in this pattern's history: the reason says how the dismissal got here
    expect(explain.stdout).toContain(
      "dismissed in LED-9/r1 via finding A1, reached through the validator's reason 'false positive. ledgerly ships no man page: flags are documented in --help.' (weight 1",
    );
  });

  it("keeps the validator's reason without its secrets, whatever shape they take", () => {
    for (const shape of secretShapes()) {
      const { s } = raised();
      // a reason that reaches the man-page rule whatever words the secret's sentence adds
      const premise = 'ledgerly ships no man page; new CLI flags are documented in --help before merge';
      feedback(s, { validatorText: withReason(`${premise}: ${shape.text.replace(/\s+/g, ' ')}`) });
      const [ignored] = events(s.location.root, 'pattern.ignored') as { reason?: string }[];
      expect({ shape: shape.name, ...ignored }).toMatchObject({
        reason: expect.stringMatching(new RegExp(`^false positive\\. ${premise}: `)),
      });
      expect(leakedSecrets(readFileSync(join(s.location.root, '.cairn', 'events.jsonl'), 'utf8'), [shape]), shape.name).toEqual([]);
      s.close();
    }
  });
});
