import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { run, fixturePath, deliberationFixtures, removeProject, type RunResult } from './helpers.js';
import { initStore } from '../lib/store/init.js';

// The correction loop end to end, as processes, over the ledgerly fixtures (fixtures/deliberations):
// the plan phase of LED-101 r1, LED-101 r2, LED-102 r1 and LED-103 r1, each as
//   format-patterns (auditor) → store-deliberation auditor → store-deliberation curator
//   → feedback-loop (auditor checked by curator) → outcome-score.
// CAIRN_NOW is pinned for every step, so every counter, timestamp and score below is exact. The
// expected values were worked out by hand from SPEC §3.3–§3.10; the comments say how.
//
// Score reminders (SPEC §3.4, §3.9.3, §3.10): rate = (S + 1) / (S + W + 2) with S = held + 0.01 per
// untested credit (at most 0.05) and W the ignore weight; decay = exp(−days / 14); category rule 1.3 ·
// causal 1.1 · observation 1.0; context 1 + 0.15 labels + 0.15 files + 0.05 phase; own role 1.0.
// Nothing here is cross-role. The block shows score:rate × decay. Credit (§3.9.2, §3.10.1): each
// finding is linked to the pattern it applies; a sighting, or a PASS the auditor only echoed a pattern
// in, is untested credit; a kept finding, a PASS that let a finding stand, a passing outcome (as much
// as outcomes tell: here, after a fail, fully) are tested (held), and each tested piece of evidence
// first ages the earlier ones by γ = 2^(−1/3) (an outcome's by γ^weight); maintain's dismissal rule
// reads the tested rate held / (held + W).

const PROJECT = 'ledgerly';
const ROUND_RESULT: Record<string, 'pass' | 'fail'> = {
  // LED-101 r1 failed QA (the token leak, S1); r2 is the re-plan that shipped; LED-102 r1 and
  // LED-103 r1 both have a confirmed QA must_fix (S1), so those runs fail too.
  'LED-101/r1': 'fail',
  'LED-101/r2': 'pass',
  'LED-102/r1': 'fail',
  'LED-103/r1': 'fail',
};

// The auditor patterns of the story, by the text they are stored under.
const T = {
  // LED-101 r1 auditor: five section items (the sixth, "n/a", is too short). Its findings each apply
  // one of them (A1 → SCHEMA, A2 → MAN, A3 → TEST_FILE), so no summary is a pattern of its own.
  TEST_FILE: 'Plans must name the test file that proves each acceptance criterion before implementation starts',
  MAN: 'Every new CLI flag must be documented in the man page before merge',
  SCHEMA:
    'an unspecified output schema leads to consumers pinning to accidental keys, which turns every later rename into a breaking change',
  MACHINE:
    'A machine-readable mode that also prints banner or progress lines is unusable from scripts because the first non-JSON line aborts the parser',
  STATUS: 'status commands in this repo are read by the deploy script as well as by people',
  // LED-101 r2 auditor: the man page again (item 1, an echo; finding A1), three new items; A2 → MAPPER.
  MAPPER: 'output mappers copy named keys; an object spread of internal state is never acceptable on a public output path',
  SPREAD: 'Spreading a context object into output → secrets leak as soon as someone adds a field upstream',
  REDACTION: 'A redaction test that only asserts the presence of keys proves nothing about what was removed',
  // LED-102 r1 auditor: TEST_FILE and MAN again (echoes), three new items; A1 → NOT_NULL, A2 → MAN, A3 → DATES.
  NOT_NULL:
    'Adding a NOT NULL column without a default to a populated table results in a failed deploy, so schema changes go nullable first, backfill second, constraint third',
  SERIALIZER: 'a serializer that spreads database rows publishes every new column the moment it is migrated',
  DATES: 'Date-only business fields such as due dates should travel as YYYY-MM-DD strings, not timestamps',
  // LED-103 r1 auditor: TEST_FILE as a near-duplicate ("begins"), three new items; A1 applies no
  // pattern, so its summary is stored as one.
  REFRESH: 'Refresh tokens must be single-use; reuse of a rotated token should revoke the whole token family',
  SLIDING: 'Sliding expiry without an absolute cap results in sessions that last forever for active clients',
  POSTGRES: 'ledgerly keeps sessions in Postgres rather than Redis, so revocation is a row update and survives restarts',
  A1_103: 'Plan does not state the clock-skew tolerance for expiry checks',
} as const;
type Key = keyof typeof T;

/** The pinned time of a step: day of March 2025 and clock time. */
const at = (day: string, time: string) => `2025-03-${day}T${time}:00.000Z`;

interface Row {
  category: string;
  success: number;
  ignores: number;
  weight: number;
  held: number;
  untested: number;
  reinforced: number;
  sightings: number;
  lifecycle: string;
  validated: number;
  regressed: number;
  lastUsed: string;
}

let root: string;
let eventsSeen = 0;
const ids: Partial<Record<Key, string>> = {};
/** What the pattern table must hold after the step just run: updated, step by step, below. */
const expected: Partial<Record<Key, Row>> = {};

function db<T>(read: (db: Database.Database) => T): T {
  const handle = new Database(join(root, '.cairn', 'cache', 'state.db'));
  try {
    return read(handle);
  } finally {
    handle.close();
  }
}

/** The pattern table as the processes left it (read straight from SQLite, no sync from here). */
function table(): Partial<Record<Key, Row>> {
  const rows = db((h) =>
    h
      .prepare(
        `SELECT id, text, category, success_count, ignore_count, ignore_weight, held, untested, reinforcement_count, sightings, lifecycle,
         was_validated, regressed, last_used FROM patterns WHERE project = ?`,
      )
      .all(PROJECT),
  ) as Record<string, any>[];
  const out: Partial<Record<Key, Row>> = {};
  for (const r of rows) {
    const key = (Object.keys(T) as Key[]).find((k) => T[k] === r.text);
    if (!key) throw new Error(`unexpected pattern: ${r.text}`);
    ids[key] = r.id;
    out[key] = {
      category: r.category,
      success: r.success_count,
      ignores: r.ignore_count,
      weight: Number(r.ignore_weight.toFixed(9)),
      held: Number(r.held.toFixed(9)),
      untested: r.untested,
      reinforced: r.reinforcement_count,
      sightings: r.sightings,
      lifecycle: r.lifecycle,
      validated: r.was_validated,
      regressed: r.regressed,
      lastUsed: new Date(r.last_used).toISOString(),
    };
  }
  return out;
}

const id = (k: Key) => {
  if (!ids[k]) table();
  return ids[k]!;
};

function learned(key: Key): string[] {
  return db((h) =>
    JSON.parse(
      (
        h.prepare('SELECT issues FROM patterns WHERE project = ? AND id = ?').get(PROJECT, id(key)) as {
          issues: string;
        }
      ).issues,
    ),
  );
}

/** Expect these patterns as just seen for the first time: success 1 (untested), one sighting, observed. */
function firstSight(keys: Key[], category: string[], lastUsed: string): void {
  keys.forEach((k, i) => {
    expected[k] = {
      category: category[i],
      success: 1,
      ignores: 0,
      weight: 0,
      held: 0,
      untested: 1,
      reinforced: 0,
      sightings: 1,
      lifecycle: 'observed',
      validated: 0,
      regressed: 0,
      lastUsed,
    };
  });
}
/** γ^strength: how much a piece of tested evidence ages the earlier ones (the default half-life, 3 verdicts). */
const aging = (strength = 1) => 2 ** (-strength / 3);
/** Rounded as table() reads them, so that sums of aged weights compare exactly. */
const r9 = (x: number) => Number(x.toFixed(9));
function change(keys: Key[], update: (r: Row) => Partial<Row>): void {
  for (const k of keys) expected[k] = { ...expected[k]!, ...update(expected[k]!) };
}

function step(name: string, args: string[], now: string): RunResult {
  const r = run(name, args, { cwd: root, env: { CAIRN_NOW: now, CAIRN_PROJECT: PROJECT, CAIRN_DEADLINE_MS: '60000' } });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).not.toMatch(/regression:/); // no validated pattern is ever dismissed in this story
  expect(r.stderr).not.toMatch(/error|failed|cannot/i);
  return r;
}

/** The events appended since the last call, as `cairn events --json` prints them. */
function newEvents(): Record<string, any>[] {
  const r = run('cairn', ['events', '--json'], { cwd: root, env: { CAIRN_PROJECT: PROJECT } });
  expect(r.code).toBe(0);
  const all = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const fresh = all.slice(eventsSeen);
  eventsSeen = all.length;
  for (const e of fresh) expect(e).toMatchObject({ v: 1, project: PROJECT });
  return fresh;
}

function fixtureOf(issue: string, runId: string, role: string) {
  const f = deliberationFixtures().find((x) => x.issue === issue && x.run === runId && x.role === role);
  if (!f) throw new Error(`no fixture for ${issue} ${runId} ${role}`);
  return f;
}

function contextArgs(issue: string, runId: string): string[] {
  const f = fixtureOf(issue, runId, 'auditor');
  return ['--issue', issue, '--run', runId, '--labels', f.labels.join(','), '--files', f.files.join(','), '--phase', f.phase];
}

function format(issue: string, runId: string, now: string) {
  const r = step('format-patterns', ['--role', 'auditor', ...contextArgs(issue, runId), '--json'], now);
  return JSON.parse(r.stdout) as {
    path: string;
    budget: number;
    patterns: { id: string; score: number; text: string; record: string }[];
    block: string;
  };
}

function store(role: string, issue: string, runId: string, now: string) {
  const f = fixtureOf(issue, runId, role);
  const r = step(
    'store-deliberation',
    ['--role', role, ...contextArgs(issue, runId), '--iteration', '1', '--file', fixturePath(f.file), '--json'],
    now,
  );
  return JSON.parse(r.stdout) as {
    evidence: string;
    verdict: string | null;
    patterns: { id: string; text: string; status: string; category: string }[];
    links: { finding: string; patterns: string[]; match: string }[];
  };
}

function feedback(issue: string, runId: string, now: string) {
  const r = step(
    'feedback-loop',
    ['--adversarial-role', 'auditor', '--validator-role', 'curator', '--issue', issue, '--run', runId, '--json'],
    now,
  );
  return JSON.parse(r.stdout);
}

function outcome(issue: string, runId: string, now: string) {
  const r = step('outcome-score', ['--issue', issue, '--run', runId, '--result', ROUND_RESULT[`${issue}/${runId}`], '--json'], now);
  return JSON.parse(r.stdout);
}

/** The injection a format step made: ranked best first, each with the score and record computed by hand. */
function expectInjected(got: ReturnType<typeof format>, scores: [Key, number, string][]): void {
  expect(got.path).toBe('full');
  expect(got.budget).toBe(800); // auditor is adversarial: 800 tokens
  expect(Object.fromEntries(got.patterns.map((p) => [p.id, p.score]))).toEqual(
    Object.fromEntries(scores.map(([k, s]) => [id(k), expect.closeTo(s, 4)])),
  );
  for (let i = 1; i < got.patterns.length; i++) expect(got.patterns[i].score).toBeLessThanOrEqual(got.patterns[i - 1].score);
  for (const [k, , record] of scores) expect(got.block).toContain(`- ${T[k]} (${record})\n`);
}

const sortedIds = (keys: Key[]) => keys.map(id).sort();
const reinforcedOf = (events: Record<string, any>[]) =>
  events
    .filter((e) => e.type === 'pattern.reinforced')
    .map((e) => e.pattern)
    .sort();
const linksOf = (stored: ReturnType<typeof store>) => stored.links.map((l) => [l.finding, l.patterns, l.match]);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cairn-e2e-'));
  mkdirSync(join(root, '.git'));
  initStore(join(root, '.cairn'));
});
afterAll(() => removeProject(root));

const R1_NEW: Key[] = ['TEST_FILE', 'MAN', 'SCHEMA', 'MACHINE', 'STATUS'];
const R2_INJECTED: Key[] = ['MACHINE', 'TEST_FILE', 'STATUS', 'SCHEMA', 'MAN'];
const R2_NEW: Key[] = ['MAPPER', 'SPREAD', 'REDACTION'];
const R3_INJECTED: Key[] = ['MAPPER', 'SPREAD', 'MACHINE', 'REDACTION', 'TEST_FILE', 'STATUS', 'SCHEMA', 'MAN'];
const R3_NEW: Key[] = ['NOT_NULL', 'SERIALIZER', 'DATES'];
const R4_INJECTED: Key[] = ['MAPPER', 'MACHINE', 'SPREAD', 'DATES', 'TEST_FILE', 'SERIALIZER', 'REDACTION', 'STATUS', 'NOT_NULL', 'SCHEMA'];
const R4_NEW: Key[] = ['REFRESH', 'SLIDING', 'POSTGRES', 'A1_103'];

/** The one event a recorded block appends: the injection of its patterns in run r1 of `issue`. */
function injectedIn(issue: string, patterns: { id: string }[]) {
  return expect.objectContaining({ type: 'pattern.injected', issue, run: 'r1', patterns: patterns.map((p) => p.id) });
}

describe('the correction loop over the ledgerly plan phase', () => {
  it('LED-101 r1: learns five auditor patterns, links the three findings to them, and penalises the man-page rule', () => {
    // format 09:00 — an empty store has nothing to inject: path skipped, and no injection event.
    const f = format('LED-101', 'r1', at('03', '09:00'));
    expect(f).toMatchObject({ path: 'skipped', patterns: [], block: '' });
    expect(newEvents()).toEqual([]);

    // store auditor 09:05 — five items ("n/a" is under 12 characters). Every finding applies one of
    // them (SPEC §3.9.1) and is linked to it: no finding summary becomes a pattern. Every pattern is
    // new: success 1, sighting 1, observed, last_used = now. The text is narrative only: L3.
    const s = store('auditor', 'LED-101', 'r1', at('03', '09:05'));
    expect(s.evidence).toBe('L3');
    expect(s.patterns.map((p) => [p.text, p.status])).toEqual(R1_NEW.map((k) => [T[k], 'new']));
    expect(linksOf(s)).toEqual([
      ['A1', [id('SCHEMA')], 'text'], // "Plan does not specify the JSON output schema for --json"
      ['A2', [id('MAN')], 'text'], // "--json is added to ledgerly status but man/ledgerly-status.1 does not document it"
      ['A3', [id('TEST_FILE')], 'text'], // "Plan does not name the test file that proves each acceptance criterion"
    ]);
    let ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual([
      'deliberation.stored',
      ...Array(5).fill('pattern.observed'),
      ...Array(3).fill('finding.linked'),
    ]);
    expect(ev[0]).toMatchObject({
      ts: at('03', '09:05'),
      role: 'auditor',
      issue: 'LED-101',
      run: 'r1',
      phase: 'plan',
      iteration: 1,
      labels: ['cli'],
      evidence: 'L3',
      verdict: {
        verdict: 'FAIL',
        effective: 'FAIL',
        must_fix: ['A1', 'A2', 'A3'],
        false_positives: [],
        findings: ['A1', 'A2', 'A3'],
      },
    });
    expect(ev.slice(1, 6).map((e) => e.text)).toEqual(R1_NEW.map((k) => T[k]));
    for (const e of ev.slice(1))
      expect(e).toMatchObject({ role: 'auditor', issue: 'LED-101', run: 'r1', deliberation: ev[0].deliberation });
    expect(ev[7]).toMatchObject({
      finding: 'A2',
      summary: '--json is added to ledgerly status but man/ledgerly-status.1 does not document it',
      patterns: [id('MAN')],
    });
    firstSight(R1_NEW, ['rule', 'rule', 'causal', 'causal', 'observation'], at('03', '09:05'));
    expect(table()).toEqual(expected);

    // store curator 09:10 — no Accumulated Patterns, no findings: nothing learned. It cites
    // src/cli/status.ts:57 with inline code, a changed file: L2. FAIL with must_fix A1, A3.
    const c = store('curator', 'LED-101', 'r1', at('03', '09:10'));
    expect(c).toMatchObject({ evidence: 'L2', verdict: 'FAIL', patterns: [], links: [] });
    ev = newEvents();
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({
      type: 'deliberation.stored',
      role: 'curator',
      evidence: 'L2',
      verdict: { effective: 'FAIL', must_fix: ['A1', 'A3'], false_positives: ['A2'], findings: [] },
    });
    expect(table()).toEqual(expected);

    // feedback 09:15 — A2 is dismissed: through its link, MAN is penalised: ignore_count 1, ignore
    // weight + 1.0 (auditor), and the untested credit (and sighting) its first sighting added in this
    // very run is taken back. It was never validated: no regression. A1 and A3 are kept (must_fix), but the
    // auditor text is L3: their patterns are not reinforced. FAIL with must_fix: nothing else.
    const fb = feedback('LED-101', 'r1', at('03', '09:15'));
    expect(fb).toMatchObject({
      verdict: 'FAIL',
      effective: 'FAIL',
      evidence: 'L3',
      problems: [],
      unmatched: [],
      already_dismissed: [],
      gate: 'not-a-pass',
      reinforced: [],
      aged: [],
      penalised: [{ finding: 'A2', pattern: id('MAN'), text: T.MAN, match: 'text', weight: 1, retracted: true, regressed: false }],
      confirmed: [
        { finding: 'A1', patterns: [id('SCHEMA')], reinforced: false },
        { finding: 'A3', patterns: [id('TEST_FILE')], reinforced: false },
      ],
    });
    ev = newEvents();
    expect(ev).toEqual([
      expect.objectContaining({
        type: 'pattern.ignored',
        ts: at('03', '09:15'),
        pattern: id('MAN'),
        role: 'auditor',
        weight: 1,
        finding: 'A2',
        retract: true,
        issue: 'LED-101',
        run: 'r1',
      }),
    ]);
    change(['MAN'], () => ({ success: 0, untested: 0, ignores: 1, weight: 1, sightings: 0 }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (fail) — nothing was injected, but the patterns the kept findings applied
    // (SCHEMA, TEST_FILE) shaped the run: ignore weight + 0.5 × 1.0 each. MAN was dismissed: left out.
    expect(outcome('LED-101', 'r1', at('03', '09:20'))).toEqual({
      issue: 'LED-101',
      run: 'r1',
      result: 'fail',
      applied: true,
      patterns: sortedIds(['SCHEMA', 'TEST_FILE']).map((pattern) => ({ pattern, weight: 1, tested: true })),
    });
    expect(newEvents()).toEqual([expect.objectContaining({ type: 'pattern.outcome', issue: 'LED-101', run: 'r1', result: 'fail' })]);
    change(['SCHEMA', 'TEST_FILE'], () => ({ weight: 0.5 }));
    expect(table()).toEqual(expected);
  });

  it('LED-101 r2: the man-page rule is shown, echoed and dismissed again; an L2 PASS reinforces only what was applied', () => {
    // format 09:00, one day later. Context: labels (cli), files and phase (plan) all overlap →
    // ctx 1.35. days = 1 − 5/1440 (last used 09:05 the day before) → decay 0.931293.
    //   MACHINE causal, S 0.01: rate 1.01/2.01 → 0.502488 × 0.931293 × 1.1 × 1.35 = 0.6949; shown 0.47
    //   TEST_FILE rule, S 0.01, W 0.5: rate 1.01/2.51 → 0.402390 × 0.931293 × 1.3 × 1.35 = 0.6577; shown 0.37
    //   STATUS observation: 0.502488 × 0.931293 × 1.35 = 0.6318; shown 0.47
    //   SCHEMA causal, S 0.01, W 0.5: 0.402390 × 0.931293 × 1.1 × 1.35 = 0.5565; shown 0.37
    //   MAN rule, S 0, W 1: rate 1/3 → 0.333333 × 0.931293 × 1.3 × 1.35 = 0.5448 — a false alarm,
    //   visible in the block: unproven, not yet disproven. Its record: -1 net, 1x ignored.
    const f = format('LED-101', 'r2', at('04', '09:00'));
    expectInjected(f, [
      ['MACHINE', 0.6949, 'score:0.47'],
      ['TEST_FILE', 0.6577, 'score:0.37'],
      ['STATUS', 0.6318, 'score:0.47'],
      ['SCHEMA', 0.5565, 'score:0.37'],
      ['MAN', 0.5448, '-1 net, 1x ignored'],
    ]);
    expect(f.patterns.map((p) => p.id)).toEqual(R2_INJECTED.map(id));
    let ev = newEvents();
    expect(ev).toEqual([
      expect.objectContaining({
        type: 'pattern.injected',
        role: 'auditor',
        issue: 'LED-101',
        run: 'r2',
        path: 'full',
        patterns: f.patterns.map((p) => p.id),
      }),
    ]);
    change(R2_INJECTED, () => ({ lastUsed: at('04', '09:00') })); // injection refreshes last_used
    expect(table()).toEqual(expected);

    // store auditor 09:05 — MAN was injected and is listed again: an echo (last_used refreshed; no
    // success, no sighting). Three new patterns. A1 → MAN, A2 → MAPPER. L2: it cites
    // src/cli/status.ts:44 with inline code.
    const s = store('auditor', 'LED-101', 'r2', at('04', '09:05'));
    expect(s.evidence).toBe('L2');
    expect(s.patterns.map((p) => [p.text, p.status])).toEqual([[T.MAN, 'echo'], ...R2_NEW.map((k) => [T[k], 'new'])]);
    expect(linksOf(s)).toEqual([
      ['A1', [id('MAN')], 'text'], // "The --json flag is still missing from man/ledgerly-status.1"
      ['A2', [id('MAPPER')], 'text'], // "Plan does not say the mapper replaces the report spread"
    ]);
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual([
      'deliberation.stored',
      ...Array(4).fill('pattern.observed'),
      'finding.linked',
      'finding.linked',
    ]);
    expect(ev[0]).toMatchObject({
      evidence: 'L2',
      verdict: { effective: 'FAIL', must_fix: ['A1'], findings: ['A1', 'A2'] },
    });
    expect(ev.slice(1, 5).map((e) => [e.pattern, e.echo])).toEqual([[id('MAN'), true], ...R2_NEW.map((k) => [id(k), undefined])]);
    change(['MAN'], () => ({ lastUsed: at('04', '09:05') }));
    firstSight(R2_NEW, ['rule', 'causal', 'observation'], at('04', '09:05'));
    expect(table()).toEqual(expected);

    // store curator 09:10 — two verdict blocks; the last (PASS, false_positives [A1]) wins. It shows
    // `$ ls` output: L1.
    const c = store('curator', 'LED-101', 'r2', at('04', '09:10'));
    expect(c).toMatchObject({ evidence: 'L1', verdict: 'PASS', patterns: [] });
    ev = newEvents();
    expect(ev).toEqual([
      expect.objectContaining({
        type: 'deliberation.stored',
        role: 'curator',
        verdict: { verdict: 'PASS', effective: 'PASS', must_fix: [], false_positives: ['A1'], findings: [] },
      }),
    ]);

    // feedback 09:15 — A1 → MAN again: ignore 2, weight 1·γ + 1 (the first dismissal aged by the
    // second); its sighting was an echo, nothing to retract. The PASS is backed by the auditor's L2
    // text: it credits what the auditor applied — MAN (echoed, but dismissed) is out; MAPPER (linked to
    // A2, which the PASS let stand) is tested (success + 1, reinforcement + 1, validated, held 1,
    // last_used = now). The four injected patterns the auditor ignored are aged a day (last_used 09:00
    // → 09:00 the day before).
    const fb = feedback('LED-101', 'r2', at('04', '09:15'));
    expect(fb).toMatchObject({
      verdict: 'PASS',
      effective: 'PASS',
      evidence: 'L2',
      gate: 'reinforced',
      unmatched: [],
      confirmed: [],
      reinforced: [id('MAPPER')],
      penalised: [{ finding: 'A1', pattern: id('MAN'), match: 'text', weight: 1, retracted: false, regressed: false }],
      aged: sortedIds(['TEST_FILE', 'MACHINE', 'STATUS', 'SCHEMA']),
    });
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual(['pattern.ignored', 'pattern.reinforced', ...Array(4).fill('pattern.aged')]);
    expect(ev[0]).toMatchObject({
      pattern: id('MAN'),
      weight: 1,
      finding: 'A1',
      retract: false,
      issue: 'LED-101',
      run: 'r2',
    });
    expect(ev[1]).toMatchObject({ pattern: id('MAPPER'), issue: 'LED-101', run: 'r2', finding: 'A2' }); // the finding the PASS let stand
    change(['MAN'], () => ({ ignores: 2, weight: r9(aging() + 1) }));
    change(['MAPPER'], () => ({ success: 2, held: 1, reinforced: 1, validated: 1, lastUsed: at('04', '09:15') }));
    change(['TEST_FILE', 'MACHINE', 'STATUS', 'SCHEMA'], () => ({ lastUsed: at('03', '09:00') }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (pass) — applied and not dismissed: MAPPER only, and the curator judged it in this
    // run (its finding stood on the PASS): the outcome leaves it to that verdict. Nothing is graded.
    const o = outcome('LED-101', 'r2', at('04', '09:20'));
    expect(o).toEqual({ issue: 'LED-101', run: 'r2', result: 'pass', applied: true, patterns: [] });
    expect(newEvents()).toEqual([expect.objectContaining({ type: 'pattern.outcome', issue: 'LED-101', run: 'r2', result: 'pass' })]);
    expect(table()).toEqual(expected);
  });

  it('LED-102 r1: shown and echoed a second time, the man-page rule is dismissed a third time and retired; a fail grades what was applied', () => {
    // format 09:00, two days later. Context: only the phase overlaps (labels and files are new) →
    // ctx 1.05. Decay: MAPPER last used 09:15 two days ago (days 2 − 15/1440: 0.867524); the r2
    // newcomers and MAN 09:05 (days 2 − 5/1440: 0.867094); the four aged ones 09:00 three days ago (0.807118).
    //   MAPPER rule, S 1 + 0.01: rate 2.01/3.01 → 0.667774 × 0.867524 × 1.3 × 1.05 = 0.7908 (1x validated)
    //   SPREAD causal, S 0.01: 0.502488 × 0.867094 × 1.1 × 1.05 = 0.5032; shown 0.44
    //   MACHINE causal: 0.502488 × 0.807118 × 1.1 × 1.05 = 0.4684; shown 0.41
    //   REDACTION observation: 0.502488 × 0.867094 × 1.05 = 0.4575; shown 0.44
    //   TEST_FILE rule, W 0.5: 0.402390 × 0.807118 × 1.3 × 1.05 = 0.4433; shown 0.32
    //   STATUS observation: 0.502488 × 0.807118 × 1.05 = 0.4258; shown 0.41
    //   SCHEMA causal, W 0.5: 0.402390 × 0.807118 × 1.1 × 1.05 = 0.3751; shown 0.32
    //   MAN rule, S 0, W 1.7937: rate 1/3.7937 → 0.263595 × 0.867094 × 1.3 × 1.05 = 0.3120 (-2 net, 2x ignored)
    const f = format('LED-102', 'r1', at('06', '09:00'));
    expectInjected(f, [
      ['MAPPER', 0.7908, '1x validated'],
      ['SPREAD', 0.5032, 'score:0.44'],
      ['MACHINE', 0.4684, 'score:0.41'],
      ['REDACTION', 0.4575, 'score:0.44'],
      ['TEST_FILE', 0.4433, 'score:0.32'],
      ['STATUS', 0.4258, 'score:0.41'],
      ['SCHEMA', 0.3751, 'score:0.32'],
      ['MAN', 0.312, '-2 net, 2x ignored'],
    ]);
    expect(f.patterns.map((p) => p.id)).toEqual(R3_INJECTED.map(id));
    let ev = newEvents();
    expect(ev).toEqual([injectedIn('LED-102', f.patterns)]);
    change(R3_INJECTED, () => ({ lastUsed: at('06', '09:00') }));
    expect(table()).toEqual(expected);

    // store auditor 09:05 — TEST_FILE and MAN were injected and are listed again: echoes (last_used
    // refreshed, nothing else). Three new patterns (tbd dropped). A1 → NOT_NULL, A2 → MAN, A3 → DATES.
    const s = store('auditor', 'LED-102', 'r1', at('06', '09:05'));
    expect(s.evidence).toBe('L3'); // bare file names without line numbers are not citations
    expect(s.patterns.map((p) => [p.text, p.status])).toEqual([
      [T.TEST_FILE, 'echo'],
      [T.MAN, 'echo'],
      ...R3_NEW.map((k) => [T[k], 'new']),
    ]);
    expect(linksOf(s)).toEqual([
      ['A1', [id('NOT_NULL')], 'text'],
      ['A2', [id('MAN')], 'text'], // "ledgerly migrate gains --backfill-due-dates with no man page entry"
      ['A3', [id('DATES')], 'text'],
    ]);
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual([
      'deliberation.stored',
      ...Array(5).fill('pattern.observed'),
      ...Array(3).fill('finding.linked'),
    ]);
    expect(ev.slice(1, 6).map((e) => [e.pattern, e.echo])).toEqual([
      [id('TEST_FILE'), true],
      [id('MAN'), true],
      ...R3_NEW.map((k) => [id(k), undefined]),
    ]);
    change(['TEST_FILE', 'MAN'], () => ({ lastUsed: at('06', '09:05') }));
    firstSight(R3_NEW, ['causal', 'observation', 'rule'], at('06', '09:05'));
    expect(table()).toEqual(expected);
    expect(learned('MAN')).toEqual(['LED-101']); // echoes do not extend the learned context
    expect(learned('TEST_FILE')).toEqual(['LED-101']);

    // store curator 09:10 — L2 (src/db/migrations/0042_add_due_date.sql:3 and a fenced statement).
    const c = store('curator', 'LED-102', 'r1', at('06', '09:10'));
    expect(c).toMatchObject({ evidence: 'L2', verdict: 'FAIL', patterns: [] });
    expect(newEvents()).toEqual([
      expect.objectContaining({
        type: 'deliberation.stored',
        role: 'curator',
        verdict: expect.objectContaining({ false_positives: ['A2'], must_fix: ['A1', 'A3'] }),
      }),
    ]);

    // feedback 09:15 — A2 → MAN a third time: ignore 3, weight 1.7937·γ + 1, nothing to retract (an
    // echo). Never validated: no regression. Nothing held up in 3 dismissals (tested rate 0 < 0.2, ≥ 3
    // ignores) meets maintain's rule, applied at once: deprecated. A1 and A3 are kept, but L3.
    const fb = feedback('LED-102', 'r1', at('06', '09:15'));
    expect(fb).toMatchObject({
      effective: 'FAIL',
      gate: 'not-a-pass',
      reinforced: [],
      aged: [],
      deprecated: [id('MAN')],
      penalised: [{ finding: 'A2', pattern: id('MAN'), match: 'text', weight: 1, retracted: false, regressed: false }],
      confirmed: [
        { finding: 'A1', patterns: [id('NOT_NULL')], reinforced: false },
        { finding: 'A3', patterns: [id('DATES')], reinforced: false },
      ],
    });
    expect(newEvents()).toEqual([
      expect.objectContaining({
        type: 'pattern.ignored',
        pattern: id('MAN'),
        finding: 'A2',
        retract: false,
        issue: 'LED-102',
        run: 'r1',
      }),
      expect.objectContaining({
        type: 'pattern.deprecated',
        pattern: id('MAN'),
        auto: true,
        reason: 'auto: dismissed: ignored 3x (≥ 3), 0 % of its recent tested evidence held up (< 20 %)',
      }),
    ]);
    change(['MAN'], () => ({ ignores: 3, weight: r9((aging() + 1) * aging() + 1), lifecycle: 'deprecated' }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (fail) — applied and not dismissed: TEST_FILE (only echoed: its untested credit one
    // down), NOT_NULL and DATES (linked: ignore weight aged by γ^0.5, + 0.5 × 1.0). The six other injected
    // patterns were ignored: not graded.
    const o = outcome('LED-102', 'r1', at('06', '09:20'));
    expect(o.patterns).toEqual(
      sortedIds(['TEST_FILE', 'NOT_NULL', 'DATES']).map((pattern) => ({
        pattern,
        weight: 1,
        tested: pattern !== id('TEST_FILE'),
      })),
    );
    ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.outcome', issue: 'LED-102', run: 'r1', result: 'fail' })]);
    change(['TEST_FILE'], (r) => ({ untested: r.untested - 1 }));
    change(['NOT_NULL', 'DATES'], (r) => ({ weight: r9(r.weight * aging(0.5) + 0.5) }));
    expect(table()).toEqual(expected);
  });

  it('LED-103 r1: the man-page rule is gone; a near-duplicate echo and a finding of its own are reinforced on an L1 PASS', () => {
    // format 09:00, seven days later. ctx 1.05 (phase only). decay exp(−7/14) = 0.606531 for the
    // patterns injected 09:00 on the 6th; exp(−(7 − 5/1440)/14) = 0.606681 for those last touched
    // at 09:05 (TEST_FILE by its echo, and the three r3 newcomers). MAN is deprecated: out.
    //   MAPPER rule, 0.667774:           0.667774 × 0.606531 × 1.3 × 1.05 = 0.5529
    //   MACHINE, SPREAD causal, 1.01/2.01: 0.502488 × 0.606531 × 1.1 × 1.05 = 0.3520; shown 0.30
    //   DATES rule, W 0.5, 1.01/2.51:    0.402390 × 0.606681 × 1.3 × 1.05 = 0.3332; shown 0.24
    //   TEST_FILE rule, S 0, W 0.5:      0.4 × 0.606681 × 1.3 × 1.05 = 0.3312; shown 0.24
    //   SERIALIZER observation:          0.502488 × 0.606681 × 1.05 = 0.3201; shown 0.30
    //   REDACTION, STATUS:               0.502488 × 0.606531 × 1.05 = 0.3200; shown 0.30
    //   NOT_NULL causal, W 0.5:          0.402390 × 0.606681 × 1.1 × 1.05 = 0.2820; shown 0.24
    //   SCHEMA causal, W 0.5:            0.402390 × 0.606531 × 1.1 × 1.05 = 0.2819; shown 0.24
    const f = format('LED-103', 'r1', at('13', '09:00'));
    expectInjected(f, [
      ['MAPPER', 0.5529, '1x validated'],
      ['MACHINE', 0.352, 'score:0.30'],
      ['SPREAD', 0.352, 'score:0.30'],
      ['DATES', 0.3332, 'score:0.24'],
      ['TEST_FILE', 0.3312, 'score:0.24'],
      ['SERIALIZER', 0.3201, 'score:0.30'],
      ['REDACTION', 0.32, 'score:0.30'],
      ['STATUS', 0.32, 'score:0.30'],
      ['NOT_NULL', 0.282, 'score:0.24'],
      ['SCHEMA', 0.2819, 'score:0.24'],
    ]);
    expect(f.block).not.toContain(T.MAN);
    let ev = newEvents();
    expect(ev).toEqual([injectedIn('LED-103', f.patterns)]);
    change(R4_INJECTED, () => ({ lastUsed: at('13', '09:00') }));
    expect(table()).toEqual(expected);

    // store auditor 09:05 — "…before implementation begins" is Jaccard 0.867 to the injected
    // TEST_FILE: an echo of it (no success, no sighting). Three new items ("ok" dropped). A1 applies
    // no known pattern: its summary is stored as a pattern (SPEC §3.9.1) and linked to it. The
    // Pre-validated checks block makes it L1; the auditor's own verdict is PASS.
    const s = store('auditor', 'LED-103', 'r1', at('13', '09:05'));
    expect(s).toMatchObject({ evidence: 'L1', verdict: 'PASS' });
    expect(s.patterns.map((p) => [p.id, p.status])).toEqual([[id('TEST_FILE'), 'echo'], ...R4_NEW.map((k) => [id(k), 'new'])]);
    expect(linksOf(s)).toEqual([['A1', [id('A1_103')], 'self']]);
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual(['deliberation.stored', ...Array(5).fill('pattern.observed'), 'finding.linked']);
    expect(ev[1]).toMatchObject({
      pattern: id('TEST_FILE'),
      echo: true,
      text: T.TEST_FILE.replace(/starts$/, 'begins'),
    });
    change(['TEST_FILE'], () => ({ lastUsed: at('13', '09:05') }));
    firstSight(R4_NEW, ['rule', 'causal', 'observation', 'observation'], at('13', '09:05'));
    expect(table()).toEqual(expected);

    // store curator 09:10 — a plain PASS, narrative only (L3; the validator's own evidence does not gate).
    const c = store('curator', 'LED-103', 'r1', at('13', '09:10'));
    expect(c).toMatchObject({ evidence: 'L3', verdict: 'PASS', patterns: [] });
    expect(newEvents()).toHaveLength(1);

    // feedback 09:15 — no false positives. PASS after an L1 auditor text: it credits what the auditor
    // applied — TEST_FILE (echoed: untested credit) and A1_103 (A1's own pattern, its finding let
    // stand: tested) — and ages the nine injected patterns it ignored (09:00 today → 09:00 yesterday).
    // The other three newcomers are untouched.
    const fb = feedback('LED-103', 'r1', at('13', '09:15'));
    expect(fb).toMatchObject({
      verdict: 'PASS',
      effective: 'PASS',
      evidence: 'L1',
      gate: 'reinforced',
      penalised: [],
      unmatched: [],
    });
    expect(fb.reinforced).toEqual(sortedIds(['TEST_FILE', 'A1_103']));
    const ignored = R4_INJECTED.filter((k) => k !== 'TEST_FILE');
    expect(fb.aged).toEqual(sortedIds(ignored));
    ev = newEvents();
    expect(ev).toHaveLength(11);
    expect(reinforcedOf(ev)).toEqual(sortedIds(['TEST_FILE', 'A1_103']));
    change(['TEST_FILE'], (r) => ({ success: r.success + 1, untested: r.untested + 1, lastUsed: at('13', '09:15') }));
    change(['A1_103'], (r) => ({
      success: r.success + 1,
      held: 1,
      reinforced: r.reinforced + 1,
      validated: 1,
      lastUsed: at('13', '09:15'),
    }));
    change(ignored, () => ({ lastUsed: at('12', '09:00') }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (fail) — of the two applied patterns, A1_103 was judged by the curator in this run
    // (its finding stood on the PASS): left to that verdict. TEST_FILE, only echoed: untested credit one down.
    const o = outcome('LED-103', 'r1', at('13', '09:20'));
    expect(o.patterns).toEqual([{ pattern: id('TEST_FILE'), weight: 1, tested: false }]);
    ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.outcome', issue: 'LED-103', run: 'r1', result: 'fail' })]);
    change(['TEST_FILE'], (r) => ({ untested: r.untested - 1 }));
    expect(table()).toEqual(expected);

    // The end of the story, written out: the recurring true pattern and the recurring false alarm.
    expect(expected.TEST_FILE).toEqual({
      // 1 first sight + 1 PASS it was echoed in (both untested); its other sightings were echoes. The
      // failed outcome of LED-101 r1, whose kept finding applied it, weighs 0.5; the two failed runs it
      // was only echoed in took back its untested credit, one each. No validator ever tested it.
      category: 'rule',
      success: 2,
      ignores: 0,
      weight: 0.5,
      held: 0,
      untested: 0,
      reinforced: 0,
      sightings: 1,
      lifecycle: 'observed',
      validated: 0,
      regressed: 0,
      lastUsed: at('13', '09:15'),
    });
    expect(expected.MAN).toEqual({
      // learned and dismissed in LED-101 r1 (its sighting taken back), shown in two blocks, dismissed
      // there too (echoes), retired at the third dismissal
      category: 'rule',
      success: 0,
      ignores: 3,
      weight: r9((aging() + 1) * aging() + 1),
      held: 0,
      untested: 0,
      reinforced: 0,
      sightings: 0,
      lifecycle: 'deprecated',
      validated: 0,
      regressed: 0,
      lastUsed: at('06', '09:05'),
    });
  });

  it('replaying the log reproduces the live state', () => {
    const live = table();
    const r = run('cairn', ['rebuild'], { cwd: root, env: { CAIRN_PROJECT: PROJECT } });
    expect(r.code).toBe(0);
    expect(table()).toEqual(live);
  });
});
