import { describe, it, expect } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { observedEvent, openTestStore, packageWithBrokenModules, run, tempProject, type RunResult } from './helpers.js';
import { autoDeprecationReason } from '../lib/patterns/lifecycle.js';
import { patternId } from '../lib/core/ids.js';
import { DAY_MS } from '../lib/core/clock.js';
import type { ScoredState } from '../lib/patterns/scoring.js';
import { DEFAULT_PRIOR } from '../lib/core/score-weights.js';
import type { Category } from '../lib/events/types.js';
import { appendEvents } from '../lib/events/log.js';

// promote, deprecate, maintain and list (SPEC §3.3 step 5, §3.4): a person is the only way to
// active; the automatic rules deprecate stale and repeatedly dismissed patterns, never active ones.

const PROJECT = 'ledgerly';
const T0 = Date.parse('2025-03-01T12:00:00Z');
const iso = (days: number) => new Date(T0 + days * DAY_MS).toISOString();

const MAN_PAGE = 'Every new CLI flag must be documented in the man page before merge';
const TEST_FILE = 'Plans must name the test file that proves each acceptance criterion before implementation starts';
const SESSIONS = 'ledgerly keeps sessions in Postgres rather than Redis, so revocation is a row update';

function cairn(dir: string, args: string[], env: Record<string, string> = {}): RunResult {
  return run('cairn', [...args, '--project', PROJECT], { cwd: dir, env });
}

function deliberation(items: string[]): string {
  return `## Review\nLooks fine.\n\n## Accumulated Patterns\n${items.map((t) => `- ${t}`).join('\n')}\n`;
}

function storeDeliberation(dir: string, role: string, issue: string, items: string[], now = iso(0)): void {
  const r = run('store-deliberation', ['--role', role, '--issue', issue, '--run', 'r1', '--project', PROJECT, '--strict'], {
    cwd: dir,
    input: deliberation(items),
    env: { CAIRN_NOW: now },
  });
  expect(r.code, r.stderr).toBe(0);
}

interface Listed {
  id: string;
  role: string;
  lifecycle: string;
  regressed: boolean;
  score: number;
  record: string;
  ignore_count: number;
  promoted_by: string | null;
  reason: string | null;
  text: string;
}

function listJson(dir: string, args: string[] = [], env: Record<string, string> = {}): Listed[] {
  const r = cairn(dir, ['list', '--json', '--strict', ...args], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).patterns;
}

function eventTypes(dir: string): string[] {
  return readFileSync(join(dir, '.cairn', 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).type);
}

const state = (over: Partial<ScoredState & { ignore_count: number }>): ScoredState & { ignore_count: number } => ({
  role: 'auditor',
  category: 'observation',
  held: 1,
  untested: 0,
  ignore_count: 0,
  ignore_weight: 0,
  reinforcement_count: 0,
  lifecycle: 'observed',
  last_used: T0,
  labels: [],
  files: [],
  phases: [],
  ...over,
});

describe('autoDeprecationReason', () => {
  const now = T0 + 45 * DAY_MS;
  const reasonFor = (over: Partial<ScoredState & { ignore_count: number }>) => autoDeprecationReason(state(over), now, DEFAULT_PRIOR);

  it('deprecates a stale pattern: base under 0.05 and unused for 30 days or more, naming the rule and its numbers', () => {
    expect(reasonFor({})).toMatch(/^auto: stale: score 0\.02\d+ < 0\.05 and unused for 45 days/); // 2/3 × exp(-45/14) ≈ 0.027
  });

  it('keeps a pattern that is old but still scores 0.05 or more, or scores low but was used recently', () => {
    expect(reasonFor({ category: 'rule', held: 40 })).toBeUndefined(); // 41/42 × 1.3 × 0.040 ≈ 0.051
    expect(reasonFor({ reinforcement_count: 3 })).toBeUndefined(); // decay-immune
    // the rate makes the base tiny, but 29 days is not yet "unused for 30 days"
    expect(reasonFor({ held: 1, ignore_count: 1, ignore_weight: 24, last_used: now - 29 * DAY_MS })).toBeUndefined();
  });

  it('deprecates a pattern ignored 3 times or more whose tested evidence held up under 0.2 of the time, however fresh', () => {
    expect(reasonFor({ held: 0.5, ignore_count: 3, ignore_weight: 3, last_used: now })).toBe(
      'auto: dismissed: ignored 3x (≥ 3), 14 % of its recent tested evidence held up (< 20 %)',
    );
    // neither the prior of the ranking nor untested credit plays a part: 0 of 3 is 0, not (0.5 + 1) / (3.5 + 2)
    expect(reasonFor({ held: 0, untested: 9, ignore_count: 3, ignore_weight: 3, last_used: now })).toMatch(
      /, 0 % of its recent tested evidence/,
    );
  });

  it('keeps a dismissed pattern with too few ignores or a rate of 0.2 or more', () => {
    expect(reasonFor({ held: 0, ignore_count: 2, ignore_weight: 2, last_used: now })).toBeUndefined();
    expect(reasonFor({ held: 1, ignore_count: 4, ignore_weight: 4, last_used: now })).toBeUndefined(); // rate 0.2
  });

  it('names both rules when both apply', () => {
    expect(reasonFor({ held: 0, ignore_count: 5, ignore_weight: 5 })).toMatch(/^auto: stale: .*; dismissed: ignored 5x/);
  });

  it('never touches an active or an already deprecated pattern', () => {
    for (const lifecycle of ['active', 'deprecated']) {
      expect(reasonFor({ lifecycle, held: 0, ignore_count: 9, ignore_weight: 9 })).toBeUndefined();
    }
  });
});

describe('cairn promote and deprecate', () => {
  it('observation alone never reaches active; promote needs --by and --reason and records who and why', () => {
    const dir = tempProject();
    for (const [i, issue] of ['LED-1', 'LED-2', 'LED-3', 'LED-4', 'LED-5'].entries())
      storeDeliberation(dir, 'auditor', issue, [MAN_PAGE], iso(i));
    const id = patternId(PROJECT, 'auditor', MAN_PAGE);
    expect(listJson(dir)[0]).toMatchObject({ id, lifecycle: 'verified' });

    for (const args of [
      ['--by', 'alice'],
      ['--reason', 'keeps catching docs gaps'],
    ]) {
      const missing = cairn(dir, ['promote', id, ...args]);
      expect(missing.code).toBe(0); // fail open
      expect(missing.stderr).toMatch(/^cairn promote: skipped \(pipeline continues\): --(by|reason) is required/);
      expect(cairn(dir, ['promote', id, ...args, '--strict']).code).toBe(2);
    }
    expect(listJson(dir)[0].lifecycle).toBe('verified');

    const r = cairn(dir, ['promote', id.slice(0, 7), '--by', 'alice', '--reason', 'keeps catching docs gaps', '--json', '--strict']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id, lifecycle: 'active', changed: true });
    expect(listJson(dir)[0]).toMatchObject({
      id,
      lifecycle: 'active',
      promoted_by: 'alice',
      reason: 'keeps catching docs gaps',
    });
    const events = readFileSync(join(dir, '.cairn', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({
      type: 'pattern.promoted',
      pattern: id,
      by: 'alice',
      reason: 'keeps catching docs gaps',
    });

    const explain = cairn(dir, ['explain', id, '--strict']);
    expect(explain.stdout).toContain('active');
    expect(explain.stdout).toContain('promoted by alice: keeps catching docs gaps');

    // Promoting again changes nothing and writes nothing.
    const before = eventTypes(dir).length;
    const again = cairn(dir, ['promote', id, '--by', 'bob', '--reason', 'again', '--strict']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already active');
    expect(eventTypes(dir).length).toBe(before);
    expect(listJson(dir)[0].promoted_by).toBe('alice');
  });

  it('deprecate hides a pattern from format-patterns and list; only promote brings it back', () => {
    const dir = tempProject();
    storeDeliberation(dir, 'auditor', 'LED-1', [MAN_PAGE, TEST_FILE]);
    const block = () =>
      run('format-patterns', ['--role', 'auditor', '--project', PROJECT, '--strict'], {
        cwd: dir,
        env: { CAIRN_NOW: iso(1) },
      }).stdout;
    expect(block()).toContain(MAN_PAGE);

    const r = cairn(dir, ['deprecate', `  ${MAN_PAGE.toUpperCase()}.`, '--reason', 'we have no man page']); // exact text, normalised
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`deprecated ${patternId(PROJECT, 'auditor', MAN_PAGE)}`);
    expect(block()).not.toContain(MAN_PAGE);
    expect(block()).toContain(TEST_FILE);
    expect(listJson(dir).map((p) => p.text)).toEqual([TEST_FILE]);
    expect(listJson(dir, ['--state', 'deprecated'])).toMatchObject([
      { text: MAN_PAGE, lifecycle: 'deprecated', reason: 'we have no man page' },
    ]);
    expect(eventTypes(dir).at(-1)).toBe('pattern.deprecated');

    expect(cairn(dir, ['deprecate', MAN_PAGE, '--reason', 'twice']).stderr).toContain('already deprecated');
    expect(cairn(dir, ['deprecate', MAN_PAGE, '--strict']).code).toBe(2); // --reason is required

    expect(cairn(dir, ['promote', MAN_PAGE, '--by', 'carol', '--reason', 'we wrote one after all', '--strict']).code).toBe(0);
    expect(block()).toContain(MAN_PAGE);
  });

  it('acts on an id or a unique exact text only: a few remembered words change nothing (issue 7)', () => {
    const dir = tempProject();
    storeDeliberation(dir, 'auditor', 'LED-1', [MAN_PAGE, TEST_FILE]);
    storeDeliberation(dir, 'judge', 'LED-1', [TEST_FILE]);
    const before = eventTypes(dir).length;
    const fuzzy = cairn(dir, ['deprecate', 'Plans must name the reviewer', '--reason', 'x', '--strict']);
    expect(fuzzy.code).toBe(1);
    expect(fuzzy.stderr).toMatch(
      /no pattern matches 'Plans must name the reviewer' by id or exact text, nothing changed \(closest: p[0-9a-f]+: Plans must name the test file/,
    );
    // the same text in two roles: both listed, neither changed
    const twice = cairn(dir, ['deprecate', TEST_FILE, '--reason', 'x', '--strict']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(
      `is the text of 2 patterns, nothing changed; name one by id: ${patternId(PROJECT, 'auditor', TEST_FILE)} (auditor)`,
    );
    expect(twice.stderr).toContain(`${patternId(PROJECT, 'judge', TEST_FILE)} (judge)`);
    expect(eventTypes(dir).length).toBe(before);
    expect(listJson(dir).every((p) => p.lifecycle !== 'deprecated')).toBe(true);
  });

  it('an unknown pattern is a clear message, not a crash', () => {
    const dir = tempProject();
    storeDeliberation(dir, 'auditor', 'LED-1', [MAN_PAGE]);
    const r = cairn(dir, ['promote', 'quantum flux capacitor alignment', '--by', 'a', '--reason', 'b']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /^cairn promote: skipped \(pipeline continues\): no pattern matches 'quantum flux capacitor alignment' by id or exact text, nothing changed/,
    );
    expect(cairn(dir, ['promote', 'quantum flux capacitor alignment', '--by', 'a', '--reason', 'b', '--strict']).code).toBe(1);
  });
});

describe('cairn maintain', () => {
  /** Four auditor patterns: stale (day 0), and at day 44 dismissed, fresh, and an active one that is dismissed too. */
  function seed(): { dir: string; ids: Record<string, string> } {
    const dir = tempProject();
    const store = openTestStore(dir, PROJECT);
    const texts = {
      stale: SESSIONS,
      dismissed: MAN_PAGE,
      fresh: TEST_FILE,
      active: 'Plans must say how the migration is rolled back',
    };
    const ids = Object.fromEntries(Object.entries(texts).map(([k, t]) => [k, patternId(PROJECT, 'auditor', t)]));
    const observe = (text: string, category: Category) => observedEvent(PROJECT, text, { category });
    // one dismissal per run: a second one in the same run would not count
    const ignore = (pattern: string, run: string) => ({
      type: 'pattern.ignored' as const,
      pattern,
      role: 'auditor',
      weight: 1,
      finding: 'A1',
      retract: true,
      issue: 'LED-1',
      run,
    });
    const previous = process.env.CAIRN_NOW;
    try {
      process.env.CAIRN_NOW = iso(0);
      appendEvents(store, [observe(texts.stale, 'observation')]);
      process.env.CAIRN_NOW = iso(44);
      appendEvents(store, [observe(texts.dismissed, 'rule'), observe(texts.fresh, 'rule'), observe(texts.active, 'rule')]);
      appendEvents(store, [{ type: 'pattern.promoted', pattern: ids.active, by: 'dana', reason: 'rollbacks matter' }]);
      appendEvents(
        store,
        [ids.dismissed, ids.active].flatMap((id) => [ignore(id, 'r1'), ignore(id, 'r2'), ignore(id, 'r3')]),
      );
    } finally {
      if (previous === undefined) delete process.env.CAIRN_NOW;
      else process.env.CAIRN_NOW = previous;
      store.close();
    }
    return { dir, ids };
  }

  const NOW = { CAIRN_NOW: iso(45) };

  it('deprecates on both rules, not the fresh or the active pattern, and a second run deprecates nothing', () => {
    const { dir, ids } = seed();
    const r = cairn(dir, ['maintain', '--json', '--strict'], NOW);
    expect(r.code, r.stderr).toBe(0);
    const { dry_run, deprecated } = JSON.parse(r.stdout) as {
      dry_run: boolean;
      deprecated: { id: string; reason: string }[];
    };
    expect(dry_run).toBe(false);
    const byId = Object.fromEntries(deprecated.map((d) => [d.id, d.reason]));
    expect(Object.keys(byId).sort()).toEqual([ids.stale, ids.dismissed].sort());
    expect(byId[ids.stale]).toMatch(/stale: score 0\.0\d+ < 0\.05 and unused for 45 days/);
    expect(byId[ids.dismissed]).toMatch(/dismissed: ignored 3x \(≥ 3\), 0 % of its recent tested evidence held up/);

    const deprecatedNow = listJson(dir, ['--state', 'deprecated'], NOW);
    expect(deprecatedNow.map((p) => p.id).sort()).toEqual([ids.stale, ids.dismissed].sort());
    expect(deprecatedNow.every((p) => p.reason?.startsWith('auto: '))).toBe(true);
    expect(
      listJson(dir, [], NOW)
        .map((p) => p.id)
        .sort(),
    ).toEqual([ids.fresh, ids.active].sort());
    const events = readFileSync(join(dir, '.cairn', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === 'pattern.deprecated').every((e) => e.auto === true)).toBe(true);

    const before = eventTypes(dir).length;
    const again = cairn(dir, ['maintain', '--json', '--strict'], NOW);
    expect(JSON.parse(again.stdout).deprecated).toEqual([]);
    expect(eventTypes(dir).length).toBe(before);
  });

  it('deprecates and is recorded as run where the tokenizer cannot load (node --jitless, ulimit -v), saying the token counts were left', () => {
    const { dir, ids } = seed();
    const pkg = packageWithBrokenModules(['tiktoken']);
    try {
      const r = run('cairn', ['maintain', '--json', '--strict', '--project', PROJECT], {
        cwd: dir,
        env: NOW,
        entry: join(pkg, 'bin', 'cairn.js'),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(
        /^cairn maintain: no line's tokens counted: tiktoken is not loadable .*; format-patterns fits uncounted lines by their byte length$/m,
      );
      const out = JSON.parse(r.stdout) as { deprecated: { id: string }[]; counted: number };
      expect(out.deprecated.map((d) => d.id).sort()).toEqual([ids.stale, ids.dismissed].sort());
      expect(out.counted).toBe(0);
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
    // doctor sees the nightly run done
    const doctor = JSON.parse(run('cairn', ['doctor', '--json', '--project', PROJECT], { cwd: dir, env: NOW }).stdout);
    expect(doctor.checks.find((c: { name: string }) => c.name === 'maintenance')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^cairn maintain last ran \d{4}-/),
    });
  });

  it('--dry-run lists the same patterns and writes nothing', () => {
    const { dir, ids } = seed();
    const log = join(dir, '.cairn', 'events.jsonl');
    const before = readFileSync(log);
    const r = cairn(dir, ['maintain', '--dry-run', '--strict'], NOW);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.startsWith('would deprecate '))).toBe(true);
    expect(r.stdout).toContain(ids.stale);
    expect(r.stdout).toContain(ids.dismissed);
    expect(readFileSync(log).equals(before)).toBe(true);
    expect(listJson(dir, ['--state', 'deprecated'], NOW)).toEqual([]);
  });

  it("packs the term index's long posting lists once; a writer still finds near-duplicates through them; cairn rebuild packs them again", () => {
    const dir = tempProject();
    const store = openTestStore(dir, PROJECT);
    // 300 patterns that all hold "endpoint" and "document": lists long enough to pack
    const texts = Array.from({ length: 300 }, (_, i) => `Every endpoint of service ${i} must document its error codes in runbook ${i * 7}`);
    try {
      process.env.CAIRN_NOW = iso(0);
      appendEvents(
        store,
        texts.map((text) => observedEvent(PROJECT, text)),
      );
    } finally {
      delete process.env.CAIRN_NOW;
      store.close();
    }
    const packed = () => {
      const db = new BetterSqlite3(join(dir, '.cairn', 'cache', 'state.db'), { readonly: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM pattern_postings').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const first = cairn(dir, ['maintain', '--json', '--strict'], NOW);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).packed).toBeGreaterThanOrEqual(2);
    expect(packed()).toBe(JSON.parse(first.stdout).packed);
    expect(JSON.parse(cairn(dir, ['maintain', '--json', '--strict'], NOW).stdout).packed).toBe(0);

    const near = run(
      'store-deliberation',
      ['--role', 'auditor', '--issue', 'LED-2', '--run', 'r1', '--project', PROJECT, '--strict', '--json'],
      {
        cwd: dir,
        input: deliberation(['Every endpoint of service 17 must document its error codes in runbook 119 too']),
        env: NOW,
      },
    );
    expect(near.code, near.stderr).toBe(0);
    expect(JSON.parse(near.stdout).patterns).toEqual([
      expect.objectContaining({ id: patternId(PROJECT, 'auditor', texts[17]), status: 'merged' }),
    ]);

    // a replay empties them; a rebuild of an index this small packs them again at once
    const rebuilt = cairn(dir, ['rebuild', '--json', '--strict']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(JSON.parse(rebuilt.stdout).packed).toBe(JSON.parse(first.stdout).packed);
    expect(packed()).toBe(JSON.parse(first.stdout).packed);
  });

  it('prints nothing on stdout when nothing is due', () => {
    const dir = tempProject();
    storeDeliberation(dir, 'auditor', 'LED-1', [MAN_PAGE]);
    const r = cairn(dir, ['maintain', '--strict'], { CAIRN_NOW: iso(1) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('deprecated 0 patterns');
  });
});

describe('cairn list', () => {
  function seed(): { dir: string; regressed: string } {
    const dir = tempProject();
    storeDeliberation(dir, 'auditor', 'LED-1', [MAN_PAGE, SESSIONS]);
    storeDeliberation(dir, 'auditor', 'LED-2', [MAN_PAGE]);
    storeDeliberation(dir, 'judge', 'LED-1', ['Diffs that change a public output shape must update the contract test in the same commit']);
    const regressed = patternId(PROJECT, 'auditor', SESSIONS);
    const store = openTestStore(dir, PROJECT);
    appendEvents(store, [{ type: 'pattern.regressed', pattern: regressed, finding: 'J1', issue: 'LED-1', run: 'r1' }]);
    store.close();
    return { dir, regressed };
  }

  it('shows every live pattern best first, filtered by role, state and regressions', () => {
    const { dir, regressed } = seed();
    const env = { CAIRN_NOW: iso(3) };
    const all = listJson(dir, [], env);
    expect(all).toHaveLength(3);
    expect(all.map((p) => p.score)).toEqual([...all.map((p) => p.score)].sort((a, b) => b - a));
    expect(all[all.length - 1].text).toBe(SESSIONS); // an observation ranks below the two rules

    expect(listJson(dir, ['--role', 'judge'], env).map((p) => p.role)).toEqual(['judge']);
    expect(listJson(dir, ['--state', 'candidate'], env).map((p) => p.text)).toEqual([MAN_PAGE]);
    expect(listJson(dir, ['--state', 'observed', '--role', 'auditor'], env).map((p) => p.text)).toEqual([SESSIONS]);
    expect(listJson(dir, ['--regressions'], env)).toMatchObject([{ id: regressed, regressed: true }]);
    expect(cairn(dir, ['list', '--state', 'retired', '--strict']).code).toBe(2);
  });

  it('prints one aligned line per pattern with id, role, state, score, record and text', () => {
    const { dir } = seed();
    const r = cairn(dir, ['list', '--strict'], { CAIRN_NOW: iso(3) });
    expect(r.code, r.stderr).toBe(0);
    const [header, ...lines] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+ROLE\s+STATE\s+RANK\s+.*RECORD\s+TEXT$/);
    expect(lines).toHaveLength(3);
    const json = listJson(dir, [], { CAIRN_NOW: iso(3) });
    lines.forEach((line, i) => {
      const p = json[i];
      expect(line.startsWith(p.id)).toBe(true);
      expect(line.indexOf(p.role)).toBe(header.indexOf('ROLE'));
      expect(line.indexOf(p.lifecycle, header.indexOf('STATE'))).toBe(header.indexOf('STATE'));
      expect(line.endsWith(p.text)).toBe(true);
      expect(line.indexOf(p.text)).toBe(header.indexOf('TEXT'));
      expect(line).toContain(p.record);
    });
    expect(r.stdout).toContain('observed regressed');
  });
});
