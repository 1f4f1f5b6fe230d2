import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { run, fixturePath, deliberationFixtures, type RunResult } from './helpers.js';
import { initStore } from '../lib/store/init.js';

// The correction loop end to end, as processes, over the ledgerly fixtures (fixtures/deliberations):
// the plan phase of LED-101 r1, LED-101 r2, LED-102 r1 and LED-103 r1, each as
//   format-patterns (auditor) → store-deliberation auditor → store-deliberation curator
//   → feedback-loop (auditor checked by curator) → outcome-score.
// CAIRN_NOW is pinned for every step, so every counter, timestamp and score below is exact. The
// expected values were worked out by hand from SPEC §3.3–§3.8; the comments say how.
//
// Score reminders (SPEC §3.4): rate = s / (s + W) with W = ignore weight if > 0 else ignore count;
// decay = exp(−days / 14); category rule 1.3 · causal 1.1 · observation 1.0; context
// 1 + 0.15 labels + 0.15 files + 0.05 phase; own role 1.0. Nothing here is cross-role.

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
  // LED-101 r1 auditor: five section items (the sixth, "n/a", is too short) and two finding
  // summaries; A2's summary is the man-page item itself, so it is deduplicated.
  TEST_FILE: 'Plans must name the test file that proves each acceptance criterion before implementation starts',
  MAN: 'Every new CLI flag must be documented in the man page before merge',
  SCHEMA: 'an unspecified output schema leads to consumers pinning to accidental keys, which turns every later rename into a breaking change',
  MACHINE: 'A machine-readable mode that also prints banner or progress lines is unusable from scripts because the first non-JSON line aborts the parser',
  STATUS: 'status commands in this repo are read by the deploy script as well as by people',
  A1_101: 'Plan does not specify the JSON output schema for --json',
  A3_101: 'Plan does not name the test file that proves each acceptance criterion',
  // LED-101 r2 auditor: the man page again (item 1 and finding A1), three new items, finding A2.
  MAPPER: 'output mappers copy named keys; an object spread of internal state is never acceptable on a public output path',
  SPREAD: 'Spreading a context object into output → secrets leak as soon as someone adds a field upstream',
  REDACTION: 'A redaction test that only asserts the presence of keys proves nothing about what was removed',
  A2_101R2: 'Plan does not say the mapper replaces the report spread',
  // LED-102 r1 auditor: TEST_FILE and MAN again, three new items, findings A1 and A3 (A2 = MAN).
  NOT_NULL: 'Adding a NOT NULL column without a default to a populated table results in a failed deploy, so schema changes go nullable first, backfill second, constraint third',
  SERIALIZER: 'a serializer that spreads database rows publishes every new column the moment it is migrated',
  DATES: 'Date-only business fields such as due dates should travel as YYYY-MM-DD strings, not timestamps',
  A1_102: 'Adding a NOT NULL column without a default fails on a populated table',
  A3_102: 'Plan does not specify whether create and update accept dueDate, or its format',
  // LED-103 r1 auditor: TEST_FILE as a near-duplicate ("begins"), three new items, finding A1.
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
        `SELECT id, text, category, success_count, ignore_count, ignore_weight, reinforcement_count, sightings, lifecycle,
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
      weight: r.ignore_weight,
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
  return db((h) => JSON.parse((h.prepare('SELECT issues FROM patterns WHERE project = ? AND id = ?').get(PROJECT, id(key)) as { issues: string }).issues));
}

/** Expect these patterns as just seen for the first time: success 1, one sighting, observed. */
function firstSight(keys: Key[], category: string[], lastUsed: string): void {
  keys.forEach((k, i) => {
    expected[k] = { category: category[i], success: 1, ignores: 0, weight: 0, reinforced: 0, sightings: 1, lifecycle: 'observed', validated: 0, regressed: 0, lastUsed };
  });
}
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
  const all = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
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
  return JSON.parse(r.stdout) as { path: string; budget: number; patterns: { id: string; score: number; text: string; record: string }[]; block: string };
}

function store(role: string, issue: string, runId: string, now: string) {
  const f = fixtureOf(issue, runId, role);
  const r = step('store-deliberation', ['--role', role, ...contextArgs(issue, runId), '--iteration', '1', '--file', fixturePath(f.file), '--json'], now);
  return JSON.parse(r.stdout) as { evidence: string; verdict: string | null; patterns: { id: string; text: string; status: string; category: string }[] };
}

function feedback(issue: string, runId: string, now: string) {
  const r = step('feedback-loop', ['--adversarial-role', 'auditor', '--validator-role', 'curator', '--issue', issue, '--run', runId, '--json'], now);
  return JSON.parse(r.stdout);
}

function outcome(issue: string, runId: string, now: string) {
  const r = step('outcome-score', ['--issue', issue, '--run', runId, '--result', ROUND_RESULT[`${issue}/${runId}`], '--json'], now);
  return JSON.parse(r.stdout);
}

/** The injection a format step made: ranked best first, each with the score computed by hand. */
function expectInjected(got: ReturnType<typeof format>, scores: [Key, number, string][]): void {
  expect(got.path).toBe('full');
  expect(got.budget).toBe(800); // auditor is adversarial: 800 tokens
  expect(Object.fromEntries(got.patterns.map((p) => [p.id, p.score]))).toEqual(
    Object.fromEntries(scores.map(([k, s]) => [id(k), expect.closeTo(s, 4)])),
  );
  for (let i = 1; i < got.patterns.length; i++) expect(got.patterns[i].score).toBeLessThanOrEqual(got.patterns[i - 1].score);
  for (const [k, , record] of scores) expect(got.block).toContain(`- ${T[k]} (${record})\n`);
  expect(got.block).not.toContain(T.MAN);
}

const sortedIds = (keys: Key[]) => keys.map(id).sort();
const reinforcedOf = (events: Record<string, any>[]) => events.filter((e) => e.type === 'pattern.reinforced').map((e) => e.pattern).sort();

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cairn-e2e-'));
  mkdirSync(join(root, '.git'));
  initStore(join(root, '.cairn'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const LED101_R1 = [T.TEST_FILE, T.MAN, T.SCHEMA, T.MACHINE, T.STATUS, T.A1_101, T.A3_101];
const R1_NEW: Key[] = ['TEST_FILE', 'MAN', 'SCHEMA', 'MACHINE', 'STATUS', 'A1_101', 'A3_101'];
const R2_INJECTED: Key[] = ['TEST_FILE', 'SCHEMA', 'MACHINE', 'STATUS', 'A1_101', 'A3_101'];
const R2_NEW: Key[] = ['MAPPER', 'SPREAD', 'REDACTION', 'A2_101R2'];
const R3_INJECTED: Key[] = [...R2_INJECTED, ...R2_NEW];
const R3_NEW: Key[] = ['NOT_NULL', 'SERIALIZER', 'DATES', 'A1_102', 'A3_102'];
const R4_INJECTED: Key[] = [...R3_INJECTED, ...R3_NEW];
const R4_NEW: Key[] = ['REFRESH', 'SLIDING', 'POSTGRES', 'A1_103'];

describe('the correction loop over the ledgerly plan phase', () => {
  it('LED-101 r1: learns seven auditor patterns and penalises the man-page false alarm', () => {
    // format 09:00 — an empty store has nothing to inject: path skipped, and no injection event.
    const f = format('LED-101', 'r1', at('03', '09:00'));
    expect(f).toMatchObject({ path: 'skipped', patterns: [], block: '' });
    expect(newEvents()).toEqual([]);

    // store auditor 09:05 — five items ("n/a" is under 12 characters) plus the A1 and A3 summaries;
    // A2's summary is the man-page item and is deduplicated. Every pattern is new: success 1,
    // sighting 1, observed, last_used = now. The text is narrative only: L3.
    const s = store('auditor', 'LED-101', 'r1', at('03', '09:05'));
    expect(s.evidence).toBe('L3');
    expect(s.patterns.map((p) => [p.text, p.status])).toEqual(LED101_R1.map((t) => [t, 'new']));
    let ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual(['deliberation.stored', ...Array(7).fill('pattern.observed')]);
    expect(ev[0]).toMatchObject({
      ts: at('03', '09:05'), role: 'auditor', issue: 'LED-101', run: 'r1', phase: 'plan', iteration: 1, labels: ['cli'], evidence: 'L3',
      verdict: { verdict: 'FAIL', effective: 'FAIL', must_fix: ['A1', 'A2', 'A3'], false_positives: [], findings: ['A1', 'A2', 'A3'] },
    });
    expect(ev.slice(1).map((e) => e.text)).toEqual(LED101_R1);
    for (const e of ev.slice(1)) {
      expect(e).toMatchObject({ role: 'auditor', issue: 'LED-101', run: 'r1', deliberation: ev[0].deliberation });
      expect(e.echo).toBeUndefined();
    }
    firstSight(R1_NEW, ['rule', 'rule', 'causal', 'causal', 'observation', 'observation', 'observation'], at('03', '09:05'));
    expect(table()).toEqual(expected);

    // store curator 09:10 — no Accumulated Patterns, no findings: nothing learned. It cites
    // src/cli/status.ts:57 with inline code, a changed file: L2. FAIL with must_fix A1, A3.
    const c = store('curator', 'LED-101', 'r1', at('03', '09:10'));
    expect(c).toMatchObject({ evidence: 'L2', verdict: 'FAIL', patterns: [] });
    ev = newEvents();
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'deliberation.stored', role: 'curator', evidence: 'L2', verdict: { effective: 'FAIL', must_fix: ['A1', 'A3'], false_positives: ['A2'], findings: [] } });
    expect(table()).toEqual(expected);

    // feedback 09:15 — A2 is the auditor finding whose summary is exactly MAN: ignore_count 1,
    // ignore weight + 1.0 (auditor), and the success its first sighting added in this very run is
    // taken back (1 → 0). It was never validated: no regression. FAIL with must_fix: no reinforcement.
    const fb = feedback('LED-101', 'r1', at('03', '09:15'));
    expect(fb).toMatchObject({
      verdict: 'FAIL', effective: 'FAIL', evidence: 'L3', problems: [], unmatched: [], already_dismissed: [], gate: 'not-a-pass', reinforced: [], aged: [],
      penalised: [{ finding: 'A2', pattern: id('MAN'), text: T.MAN, match: 'exact', weight: 1, retracted: true, regressed: false }],
    });
    ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.ignored', ts: at('03', '09:15'), pattern: id('MAN'), role: 'auditor', weight: 1, finding: 'A2', retract: true, issue: 'LED-101', run: 'r1' })]);
    change(['MAN'], () => ({ success: 0, ignores: 1, weight: 1 }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (fail) — nothing was injected in LED-101 r1: the grading is recorded, empty.
    expect(outcome('LED-101', 'r1', at('03', '09:20'))).toEqual({ issue: 'LED-101', run: 'r1', result: 'fail', applied: true, patterns: [] });
    expect(newEvents()).toEqual([expect.objectContaining({ type: 'pattern.outcome', issue: 'LED-101', run: 'r1', result: 'fail', patterns: [] })]);
    expect(table()).toEqual(expected);
  });

  it('LED-101 r2: injects six, dismisses the man page again, reinforces on an L2 PASS, grades a pass', () => {
    // format 09:00, one day later. Context: labels (cli), files and phase (plan) all overlap →
    // ctx 1.35. days = 1 − 5/1440 (last used 09:05 the day before) → decay 0.931293.
    //   TEST_FILE rule:  1 × 0.931293 × 1.3 × 1.35 = 1.6344
    //   SCHEMA, MACHINE causal: × 1.1 = 1.3830
    //   STATUS, A1_101, A3_101 observation: × 1.0 = 1.2572
    //   MAN: rate 0 / (0 + 1) = 0 → below the cut, not injected.
    const f = format('LED-101', 'r2', at('04', '09:00'));
    expectInjected(f, [
      ['TEST_FILE', 1.6344, 'score:1.63'],
      ['SCHEMA', 1.383, 'score:1.38'],
      ['MACHINE', 1.383, 'score:1.38'],
      ['STATUS', 1.2572, 'score:1.26'],
      ['A1_101', 1.2572, 'score:1.26'],
      ['A3_101', 1.2572, 'score:1.26'],
    ]);
    expect(f.patterns[0].id).toBe(id('TEST_FILE'));
    let ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.injected', role: 'auditor', issue: 'LED-101', run: 'r2', path: 'full', patterns: f.patterns.map((p) => p.id) })]);
    change(R2_INJECTED, () => ({ lastUsed: at('04', '09:00') })); // injection refreshes last_used
    expect(table()).toEqual(expected);

    // store auditor 09:05 — MAN was not injected, so it is a real sighting: success 0 → 1,
    // sightings 2 → candidate (one issue so far). Four new patterns. No echoes. L2: it cites
    // src/cli/status.ts:44 with inline code.
    const s = store('auditor', 'LED-101', 'r2', at('04', '09:05'));
    expect(s.evidence).toBe('L2');
    expect(s.patterns.map((p) => [p.text, p.status])).toEqual([[T.MAN, 'seen'], ...R2_NEW.map((k) => [T[k], 'new'])]);
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual(['deliberation.stored', ...Array(5).fill('pattern.observed')]);
    expect(ev[0]).toMatchObject({ evidence: 'L2', verdict: { effective: 'FAIL', must_fix: ['A1'], findings: ['A1', 'A2'] } });
    expect(ev.slice(1).map((e) => [e.pattern, e.echo])).toEqual([id('MAN'), ...R2_NEW.map(id)].map((x) => [x, undefined]));
    change(['MAN'], () => ({ success: 1, sightings: 2, lifecycle: 'candidate', lastUsed: at('04', '09:05') }));
    firstSight(R2_NEW, ['rule', 'causal', 'observation', 'observation'], at('04', '09:05'));
    expect(table()).toEqual(expected);

    // store curator 09:10 — two verdict blocks; the last (PASS, false_positives [A1]) wins. It shows
    // `$ ls` output: L1.
    const c = store('curator', 'LED-101', 'r2', at('04', '09:10'));
    expect(c).toMatchObject({ evidence: 'L1', verdict: 'PASS', patterns: [] });
    ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'deliberation.stored', role: 'curator', verdict: { verdict: 'PASS', effective: 'PASS', must_fix: [], false_positives: ['A1'], findings: [] } })]);

    // feedback 09:15 — A1 is MAN again: ignore 2, weight 2, and this run's sighting success is
    // retracted (1 → 0). The PASS is backed by the auditor's L2 text, so the six injected patterns
    // are reinforced (success + 1, reinforcement + 1, validated, last_used = now); none is left to age.
    const fb = feedback('LED-101', 'r2', at('04', '09:15'));
    expect(fb).toMatchObject({
      verdict: 'PASS', effective: 'PASS', evidence: 'L2', gate: 'reinforced', aged: [], unmatched: [],
      penalised: [{ finding: 'A1', pattern: id('MAN'), match: 'exact', weight: 1, retracted: true, regressed: false }],
    });
    expect([...fb.reinforced].sort()).toEqual(sortedIds(R2_INJECTED));
    ev = newEvents();
    expect(ev[0]).toMatchObject({ type: 'pattern.ignored', pattern: id('MAN'), weight: 1, finding: 'A1', retract: true, issue: 'LED-101', run: 'r2' });
    expect(ev.slice(1).every((e) => e.type === 'pattern.reinforced' && e.issue === 'LED-101' && e.run === 'r2')).toBe(true);
    expect(reinforcedOf(ev)).toEqual(sortedIds(R2_INJECTED));
    expect(ev).toHaveLength(7);
    change(['MAN'], () => ({ success: 0, ignores: 2, weight: 2 }));
    change(R2_INJECTED, (r) => ({ success: r.success + 1, reinforced: 1, validated: 1, lastUsed: at('04', '09:15') }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (pass) — the six injected auditor patterns (weight 1.0) get one more success.
    const o = outcome('LED-101', 'r2', at('04', '09:20'));
    expect(o).toMatchObject({ result: 'pass', applied: true });
    expect(o.patterns.map((p: { pattern: string }) => p.pattern).sort()).toEqual(sortedIds(R2_INJECTED));
    ev = newEvents();
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'pattern.outcome', issue: 'LED-101', run: 'r2', result: 'pass' });
    expect(ev[0].patterns).toEqual(expect.arrayContaining(R2_INJECTED.map((k) => ({ pattern: id(k), weight: 1 }))));
    change(R2_INJECTED, () => ({ success: 3 }));
    expect(table()).toEqual(expected);
  });

  it('LED-102 r1: an echo adds nothing, the man page reaches verified yet is dismissed a third time, a fail grades ten', () => {
    // format 09:00, two days later. Context: only the phase overlaps (labels and files are new) →
    // ctx 1.05. The six reinforced ones were last used 09:15 two days ago (days 2 − 15/1440,
    // decay 0.867549), rate 3/3; the r2 newcomers 09:05 (days 2 − 5/1440, decay 0.867155), rate 1/1.
    //   TEST_FILE 1.3 × 1.05 × 0.867549 = 1.1842      MAPPER 1.3 × 1.05 × 0.867155 = 1.1836
    //   SCHEMA, MACHINE 1.1 × … = 1.0020               SPREAD 1.1 × … = 1.0015
    //   STATUS, A1_101, A3_101 1.05 × … = 0.9109       REDACTION, A2_101R2 1.05 × … = 0.9104
    //   MAN: rate 0 → not injected. Reinforced ones show "1x validated", the others their score.
    const f = format('LED-102', 'r1', at('06', '09:00'));
    expectInjected(f, [
      ['TEST_FILE', 1.1842, '1x validated'],
      ['MAPPER', 1.1836, 'score:1.18'],
      ['SCHEMA', 1.002, '1x validated'],
      ['MACHINE', 1.002, '1x validated'],
      ['SPREAD', 1.0015, 'score:1.00'],
      ['STATUS', 0.9109, '1x validated'],
      ['A1_101', 0.9109, '1x validated'],
      ['A3_101', 0.9109, '1x validated'],
      ['REDACTION', 0.9104, 'score:0.91'],
      ['A2_101R2', 0.9104, 'score:0.91'],
    ]);
    let ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.injected', issue: 'LED-102', run: 'r1', patterns: f.patterns.map((p) => p.id) })]);
    change(R3_INJECTED, () => ({ lastUsed: at('06', '09:00') }));
    expect(table()).toEqual(expected);

    // store auditor 09:05 — TEST_FILE was injected into the auditor for this run and comes back
    // verbatim: an echo (last_used refreshed; no success, no sighting). MAN was not injected: a real
    // sighting, success 0 → 1, sightings 3 in 2 issues → verified. Five new patterns (tbd dropped).
    const s = store('auditor', 'LED-102', 'r1', at('06', '09:05'));
    expect(s.evidence).toBe('L3'); // bare file names without line numbers are not citations
    expect(s.patterns.map((p) => [p.text, p.status])).toEqual([[T.TEST_FILE, 'echo'], [T.MAN, 'seen'], ...R3_NEW.map((k) => [T[k], 'new'])]);
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual(['deliberation.stored', ...Array(7).fill('pattern.observed')]);
    expect(ev.slice(1).map((e) => [e.pattern, e.echo])).toEqual([
      [id('TEST_FILE'), true],
      [id('MAN'), undefined],
      ...R3_NEW.map((k) => [id(k), undefined]),
    ]);
    change(['TEST_FILE'], () => ({ lastUsed: at('06', '09:05') }));
    change(['MAN'], () => ({ success: 1, sightings: 3, lifecycle: 'verified', lastUsed: at('06', '09:05') }));
    firstSight(R3_NEW, ['causal', 'observation', 'rule', 'observation', 'observation'], at('06', '09:05'));
    expect(table()).toEqual(expected);
    expect(learned('MAN')).toEqual(['LED-101', 'LED-102']);
    expect(learned('TEST_FILE')).toEqual(['LED-101']); // an echo does not extend the learned context

    // store curator 09:10 — L2 (src/db/migrations/0042_add_due_date.sql:3 and a fenced statement).
    const c = store('curator', 'LED-102', 'r1', at('06', '09:10'));
    expect(c).toMatchObject({ evidence: 'L2', verdict: 'FAIL', patterns: [] });
    expect(newEvents()).toEqual([expect.objectContaining({ type: 'deliberation.stored', role: 'curator', verdict: expect.objectContaining({ false_positives: ['A2'], must_fix: ['A1', 'A3'] }) })]);

    // feedback 09:15 — A2 = MAN a third time: ignore 3, weight 3, this run's success retracted
    // (1 → 0). Verified is a lifecycle, not validation: was_validated is 0, so no regression.
    // Three ignores at success rate 0 (< 0.2) meet maintain's rule, applied at once: deprecated.
    const fb = feedback('LED-102', 'r1', at('06', '09:15'));
    expect(fb).toMatchObject({
      effective: 'FAIL', gate: 'not-a-pass', reinforced: [], aged: [], deprecated: [id('MAN')],
      penalised: [{ finding: 'A2', pattern: id('MAN'), match: 'exact', weight: 1, retracted: true, regressed: false }],
    });
    expect(newEvents()).toEqual([
      expect.objectContaining({ type: 'pattern.ignored', pattern: id('MAN'), finding: 'A2', retract: true, issue: 'LED-102', run: 'r1' }),
      expect.objectContaining({ type: 'pattern.deprecated', pattern: id('MAN'), auto: true, reason: 'auto: dismissed: ignored 3x (≥ 3) with success rate 0.000 < 0.2' }),
    ]);
    change(['MAN'], () => ({ success: 0, ignores: 3, weight: 3, lifecycle: 'deprecated' }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (fail) — the ten injected patterns: ignore weight + 0.5 × 1.0 (auditor).
    // ignore_count is untouched: an outcome is not a dismissal.
    const o = outcome('LED-102', 'r1', at('06', '09:20'));
    expect(o.patterns.map((p: { pattern: string }) => p.pattern).sort()).toEqual(sortedIds(R3_INJECTED));
    ev = newEvents();
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ type: 'pattern.outcome', issue: 'LED-102', run: 'r1', result: 'fail' });
    expect(ev[0].patterns).toHaveLength(10);
    change(R3_INJECTED, () => ({ weight: 0.5 }));
    expect(table()).toEqual(expected);
  });

  it('LED-103 r1: a near-duplicate echo, an L1 PASS reinforces all fifteen injected, a fail grades them', () => {
    // format 09:00, seven days later. ctx 1.05 (phase only). decay exp(−7/14) = 0.606531 for the
    // patterns injected 09:00 on the 6th; exp(−(7 − 5/1440)/14) = 0.606682 for those last touched
    // at 09:05 (TEST_FILE by its echo, and the five r3 newcomers).
    //   DATES rule, rate 1:              1.3 × 1.05 × 0.606682 = 0.8281
    //   TEST_FILE rule, rate 3/3.5:      0.857143 × 1.3 × 1.05 × 0.606682 = 0.7098
    //   NOT_NULL causal, rate 1:         1.1 × 1.05 × 0.606682 = 0.7007
    //   SERIALIZER, A1_102, A3_102:      1.05 × 0.606682 = 0.6370
    //   SCHEMA, MACHINE causal, 3/3.5:   0.857143 × 1.1 × 1.05 × 0.606531 = 0.6005
    //   MAPPER rule, rate 1/1.5:         0.666667 × 1.3 × 1.05 × 0.606531 = 0.5519
    //   STATUS, A1_101, A3_101, 3/3.5:   0.857143 × 1.05 × 0.606531 = 0.5459
    //   SPREAD causal, 1/1.5:            0.666667 × 1.1 × 1.05 × 0.606531 = 0.4670
    //   REDACTION, A2_101R2, 1/1.5:      0.666667 × 1.05 × 0.606531 = 0.4246
    //   MAN: deprecated → out.
    const f = format('LED-103', 'r1', at('13', '09:00'));
    expectInjected(f, [
      ['DATES', 0.8281, 'score:0.83'],
      ['TEST_FILE', 0.7098, '1x validated'],
      ['NOT_NULL', 0.7007, 'score:0.70'],
      ['SERIALIZER', 0.637, 'score:0.64'],
      ['A1_102', 0.637, 'score:0.64'],
      ['A3_102', 0.637, 'score:0.64'],
      ['SCHEMA', 0.6005, '1x validated'],
      ['MACHINE', 0.6005, '1x validated'],
      ['MAPPER', 0.5519, 'score:0.55'],
      ['STATUS', 0.5459, '1x validated'],
      ['A1_101', 0.5459, '1x validated'],
      ['A3_101', 0.5459, '1x validated'],
      ['SPREAD', 0.467, 'score:0.47'],
      ['REDACTION', 0.4246, 'score:0.42'],
      ['A2_101R2', 0.4246, 'score:0.42'],
    ]);
    let ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.injected', issue: 'LED-103', run: 'r1', patterns: f.patterns.map((p) => p.id) })]);
    change(R4_INJECTED, () => ({ lastUsed: at('13', '09:00') }));
    expect(table()).toEqual(expected);

    // store auditor 09:05 — "…before implementation begins" is Jaccard 0.867 to the injected
    // TEST_FILE: an echo of it (no success, no sighting). Four new patterns ("ok" dropped). The
    // Pre-validated checks block makes it L1; the auditor's own verdict is PASS.
    const s = store('auditor', 'LED-103', 'r1', at('13', '09:05'));
    expect(s).toMatchObject({ evidence: 'L1', verdict: 'PASS' });
    expect(s.patterns.map((p) => [p.id, p.status])).toEqual([[id('TEST_FILE'), 'echo'], ...R4_NEW.map((k) => [id(k), 'new'])]);
    ev = newEvents();
    expect(ev.map((e) => e.type)).toEqual(['deliberation.stored', ...Array(5).fill('pattern.observed')]);
    expect(ev[1]).toMatchObject({ pattern: id('TEST_FILE'), echo: true, text: T.TEST_FILE.replace(/starts$/, 'begins') });
    change(['TEST_FILE'], () => ({ lastUsed: at('13', '09:05') }));
    firstSight(R4_NEW, ['rule', 'causal', 'observation', 'observation'], at('13', '09:05'));
    expect(table()).toEqual(expected);

    // store curator 09:10 — a plain PASS, narrative only (L3; the validator's own evidence does not gate).
    const c = store('curator', 'LED-103', 'r1', at('13', '09:10'));
    expect(c).toMatchObject({ evidence: 'L3', verdict: 'PASS', patterns: [] });
    expect(newEvents()).toHaveLength(1);

    // feedback 09:15 — no false positives. PASS after an L1 auditor text: all fifteen injected
    // patterns are reinforced; the four newcomers were not injected and are untouched.
    const fb = feedback('LED-103', 'r1', at('13', '09:15'));
    expect(fb).toMatchObject({ verdict: 'PASS', effective: 'PASS', evidence: 'L1', gate: 'reinforced', penalised: [], unmatched: [], aged: [] });
    expect([...fb.reinforced].sort()).toEqual(sortedIds(R4_INJECTED));
    ev = newEvents();
    expect(ev).toHaveLength(15);
    expect(reinforcedOf(ev)).toEqual(sortedIds(R4_INJECTED));
    change(R4_INJECTED, (r) => ({ success: r.success + 1, reinforced: r.reinforced + 1, validated: 1, lastUsed: at('13', '09:15') }));
    expect(table()).toEqual(expected);

    // outcome 09:20 (fail) — fifteen patterns, ignore weight + 0.5 each.
    const o = outcome('LED-103', 'r1', at('13', '09:20'));
    expect(o.patterns).toHaveLength(15);
    ev = newEvents();
    expect(ev).toEqual([expect.objectContaining({ type: 'pattern.outcome', issue: 'LED-103', run: 'r1', result: 'fail' })]);
    change(R4_INJECTED, (r) => ({ weight: r.weight + 0.5 }));
    expect(table()).toEqual(expected);

    // The end of the story, written out: the recurring true pattern and the recurring false alarm.
    expect(expected.TEST_FILE).toEqual({
      // 1 first sight + 1 r2 reinforcement + 1 r2 pass + 1 r4 reinforcement; r3 and r4 sightings were echoes
      category: 'rule', success: 4, ignores: 0, weight: 1, reinforced: 2, sightings: 1, lifecycle: 'observed',
      validated: 1, regressed: 0, lastUsed: at('13', '09:15'),
    });
    expect(expected.MAN).toEqual({
      // seen in three runs, each sighting's success retracted by its dismissal; retired at the third
      category: 'rule', success: 0, ignores: 3, weight: 3, reinforced: 0, sightings: 3, lifecycle: 'deprecated',
      validated: 0, regressed: 0, lastUsed: at('06', '09:05'),
    });
  });

  it('replaying the log reproduces the live state', () => {
    const live = table();
    const r = run('cairn', ['rebuild'], { cwd: root, env: { CAIRN_PROJECT: PROJECT } });
    expect(r.code).toBe(0);
    expect(table()).toEqual(live);
  });
});
