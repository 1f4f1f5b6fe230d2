import { describe, it, expect, afterEach } from 'vitest';
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Store } from '../lib/store/store.js';
import { EVENT_LOG_INDEXES, EVENT_LOG_TABLES, SCHEMA_VERSION, type Database } from '../lib/store/db.js';
import { rebuildIndex } from '../lib/store/follower.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { currentBasis, formatPatterns, recordInjection } from '../lib/patterns/format.js';
import { runFeedback } from '../lib/patterns/feedback.js';
import { appendEvents, appendEventLines, patternDb, eventFollower } from '../lib/events/log.js';
import { nextUlid } from '../lib/core/ids.js';
import type { EventPayload } from '../lib/events/types.js';
import type { Deadline } from '../lib/core/deadline.js';
import { deliberationFixtures, FIXTURES, fixturePath, fixtureText, openTestStore, run, seededRandom, tempProject } from './helpers.js';
import { listPatterns } from '../lib/patterns/queries.js';
import { scorePattern } from '../lib/patterns/scoring.js';

// events.jsonl is the truth and the database its index (SPEC §3.2): the live state must equal a
// replay, whatever happened to the log (torn tails, merged or duplicated lines, other writers).

// ---------------------------------------------------------------- helpers

type Snapshot = Record<string, unknown[]>;

/** Every derived table, every column, in a deterministic order. */
function snapshot(db: Database): Snapshot {
  const out: Snapshot = {};
  for (const table of EVENT_LOG_TABLES) {
    const width = db.prepare(`SELECT * FROM ${table} LIMIT 0`).columns().length;
    const order = Array.from({ length: width }, (_, i) => i + 1).join(', ');
    out[table] = db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).raw().all();
  }
  return out;
}

function dbPath(root: string): string {
  return join(root, '.cairn', 'cache', 'state.db');
}

function eventsPath(root: string): string {
  return join(root, '.cairn', 'events.jsonl');
}

/** The database file as another process left it. */
function snapshotFile(root: string): Snapshot {
  const db = new BetterSqlite3(dbPath(root));
  try {
    return snapshot(db);
  } finally {
    db.close();
  }
}

function rebuildByProcess(root: string): {
  report: { applied: number; skipped: number; rebuilt: boolean };
  stderr: string;
} {
  const r = run('cairn', ['rebuild', '--json', '--strict'], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
  return { report: JSON.parse(r.stdout), stderr: r.stderr };
}

function logLines(root: string): string[] {
  return readFileSync(eventsPath(root), 'utf8').split('\n').slice(0, -1);
}

/** Pin "now" (CAIRN_NOW) for in-process work; restored after each test. */
const savedNow = process.env.CAIRN_NOW;
afterEach(() => {
  if (savedNow === undefined) delete process.env.CAIRN_NOW;
  else process.env.CAIRN_NOW = savedNow;
});
function setNow(ms: number): void {
  process.env.CAIRN_NOW = new Date(ms).toISOString();
}
const START = Date.parse('2026-01-05T09:00:00.000Z');
const MINUTE = 60_000;

/** Deterministic random choices for the operation sequence. */
function prng(seed: number) {
  const next = seededRandom(seed);
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(xs: readonly T[]): T {
      return xs[Math.floor(next() * xs.length)];
    },
    some<T>(xs: readonly T[], max: number): T[] {
      const n = Math.floor(next() * (max + 1));
      return [...new Set(Array.from({ length: n }, () => xs[Math.floor(next() * xs.length)]))];
    },
  };
}
type Rng = ReturnType<typeof prng>;

// Sentences for generated deliberations; variants change one word so that near-duplicates merge.
const SUBJECTS = [
  'Every migration that adds a column must ship with a default and a backfill plan',
  'Handlers that parse money amounts should reject floats and accept integer cents only',
  'A retry loop without jitter leads to synchronized load spikes against the primary database',
  'Never log the raw authorization header even when the request fails validation',
  'Contract tests for the public invoice shape must run in the same pipeline as unit tests',
  'Feature flags that guard schema changes are removed in the release after the migration',
  'Because the queue consumer acknowledges early, a crash loses the message it was processing',
  'Timezone conversions belong at the API edge so that storage keeps UTC timestamps only',
  'The deploy script reads status output, therefore banner lines break its parser',
  'Avoid global mutable caches in request handlers since tests then depend on their order',
  'Rate limits are configured at the router and do not belong in each handler',
  'Session refresh tokens must be single use and rotated on every successful refresh',
];
const ENDINGS = ['today', 'always', 'everywhere', 'reliably'];
const ROLES = ['auditor', 'curator', 'judge', 'inspector', 'sentinel', 'lens', 'architect'];
const ISSUES = ['LED-101', 'LED-102', 'LED-103', 'LED-104'];
const RUNS = ['r1', 'r2', 'r3'];
const PHASES = ['plan', 'review', 'qa', null];
const LABELS = ['cli', 'api', 'database', 'auth', 'security'];
const FILES = [
  'src/cli/status.ts',
  'src/api/invoices.ts',
  'db/migrations/0042_add_due_date.sql',
  'src/auth/session.ts',
  'test/status.test.ts',
];

/** A finding worded about a concrete file, from some of a subject's words: it may link to that subject's pattern, or to none. */
function findingAbout(
  rng: Rng,
  subject: string,
  id: string,
  cite?: string,
): { id: string; summary: string; location: string; fix_hint: string } {
  const some = subject
    .split(' ')
    .filter((w) => w.length > 4 && rng.next() < 0.6)
    .join(' ');
  return {
    id,
    summary: `${cite ? `[${cite}] ` : ''}${rng.pick(FILES)} misses this: ${some || 'nothing in common'}`,
    location: `${rng.pick(FILES)}:${1 + rng.int(90)}`,
    fix_hint: 'Fix it',
  };
}

function generatedText(rng: Rng, cite?: string): string {
  const items = Array.from({ length: 1 + rng.int(4) }, () => {
    const s = rng.pick(SUBJECTS);
    return rng.next() < 0.5 ? s : `${s} ${rng.pick(ENDINGS)}`;
  });
  const prefix = rng.pick(['## Accumulated Patterns', '**Accumulated Patterns**', 'Accumulated Patterns:']);
  const findings = Array.from({ length: rng.int(4) }, (_, i) =>
    findingAbout(rng, rng.pick([...items, rng.pick(SUBJECTS)]), `A${i + 1}`, i === 0 ? cite : undefined),
  );
  const evidence = rng.next() < 0.5 ? '```\n$ npm test\nTests: 12 passed, 12 total\n```\n' : 'Reasoning only.\n';
  const verdict = `<!-- jkz:verdict-json ${JSON.stringify({ verdict: findings.length ? 'FAIL' : 'PASS', issues: findings, must_fix: findings.map((f) => f.id), false_positives: [] })} -->`;
  return `# deliberation\n\nSome reasoning about the change.\n\n${evidence}\n${prefix}\n\n${items.map((t) => `- ${t}`).join('\n')}\n\n${verdict}\n`;
}

/** A validator's verdict on findings A1–A3 (and the S and J ids of the fixtures): some dismissed, some kept. */
function validatorText(rng: Rng): string {
  const ids = ['A1', 'A2', 'A3', 'S1', 'S2', 'J1', 'J2'].filter(() => rng.next() < 0.4);
  const dismissed = ids.filter(() => rng.next() < 0.5);
  const kept = ids.filter((id) => !dismissed.includes(id));
  const verdict = { verdict: kept.length ? 'FAIL' : 'PASS', issues: [], must_fix: kept, false_positives: dismissed };
  return `# check\n\n<!-- jkz:verdict-json ${JSON.stringify(verdict)} -->\n`;
}

interface Counts {
  [kind: string]: number;
}

/**
 * Drive `ops` seeded random operations through the library, as the pipeline would: deliberations
 * stored, blocks formatted and injections recorded, and the feedback-like events the graders append.
 */
function drive(stores: Store[], ops: number, seed: number): Counts {
  const rng = prng(seed);
  const fixtures = deliberationFixtures();
  const counts: Counts = {};
  const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
  let now = START;
  for (let i = 0; i < ops; i++) {
    now += rng.int(6 * 60) * MINUTE; // hours may pass between steps: decay and ordering matter
    setNow(now);
    const store = rng.pick(stores);
    const issue = rng.pick(ISSUES);
    const runId = rng.pick(RUNS);
    const kind = rng.next();
    if (kind < 0.33) {
      const fx = rng.next() < 0.5 ? rng.pick(fixtures) : undefined;
      // now and then a finding cites a short id, as the block shows it with --ids
      const known = patternDb(store).prepare('SELECT id FROM patterns WHERE project = ? ORDER BY id LIMIT 5').all(store.project) as {
        id: string;
      }[];
      const cite = known.length && rng.next() < 0.2 ? rng.pick(known).id.slice(0, 7) : undefined;
      const input = {
        text: fx ? fixtureText(fx.file) : generatedText(rng, cite),
        role: fx && rng.next() < 0.8 ? fx.role : rng.pick(ROLES),
        issue: fx && rng.next() < 0.5 ? fx.issue : issue,
        run: runId,
        phase: fx ? fx.phase : rng.pick(PHASES),
        iteration: 1 + rng.int(2),
        labels: rng.some(LABELS, 2),
        files: rng.some(FILES, 3),
      };
      const result = storeDeliberation(store, input);
      count(result.alreadyStored ? 'store:already' : 'store');
      for (const p of result.patterns) count(`observed:${p.status}`);
      for (const l of result.links) count(`linked:${l.match}`);
      // an orchestrator retrying the step: the same text again for the same role and issue/run
      if (rng.next() < 0.1) count(storeDeliberation(store, input).alreadyStored ? 'store:already' : 'store');
    } else if (kind < 0.45) {
      const report = runFeedback(store, {
        adversarialRole: rng.pick(['auditor', 'judge', 'sentinel']),
        validatorRole: rng.pick(['curator', 'inspector', 'lens']),
        issue,
        run: runId,
        files: rng.some(FILES, 1),
        validatorText: validatorText(rng),
        dryRun: false,
      });
      count('feedback');
      if (report.penalised.length) count('feedback:penalised');
      if (report.confirmed.some((c) => c.reinforced)) count('feedback:confirmed');
      if (report.gate === 'reinforced') count('feedback:pass');
    } else if (kind < 0.62) {
      const role = rng.pick(ROLES);
      const budget = rng.pick([undefined, undefined, 40, 90, 100_000]);
      const result = formatPatterns(store, {
        role,
        issue,
        run: runId,
        labels: rng.some(LABELS, 2),
        files: rng.some(FILES, 2),
        phase: rng.pick(PHASES),
        budget,
        exactTokens: false,
      });
      recordInjection(store, result, issue, runId);
      count(`format:${result.path}`);
    } else {
      const rows = patternDb(store).prepare('SELECT id, role FROM patterns WHERE project = ? ORDER BY id').all(store.project) as {
        id: string;
        role: string;
      }[];
      if (rows.length === 0) continue;
      const target = rng.pick(rows);
      // now and then an id this project does not have (a foreign or mistyped reference)
      const pattern = rng.next() < 0.05 ? 'p0000000000000000' : target.id;
      const scope = { issue, run: runId };
      const choice = rng.int(9);
      let payload: EventPayload;
      if (choice === 0)
        payload = {
          type: 'pattern.ignored',
          pattern,
          role: target.role,
          weight: rng.pick([0.5, 1, 1.5]),
          finding: `F${rng.int(5)}`,
          retract: rng.next() < 0.5,
          ...scope,
        };
      else if (choice === 1) payload = { type: 'pattern.reinforced', pattern, ...scope };
      else if (choice === 2) payload = { type: 'pattern.aged', pattern, ...scope };
      else if (choice === 3) {
        const graded = rng.some(rows, 4).map((r) => ({ pattern: r.id, weight: rng.pick([1, 1.5]) }));
        payload = { type: 'pattern.outcome', result: rng.pick(['pass', 'fail'] as const), patterns: graded, ...scope };
      } else if (choice === 4)
        payload = {
          type: 'pattern.promoted',
          pattern,
          by: rng.pick(['ana', 'bo']),
          reason: 'keeps catching real bugs',
        };
      else if (choice === 5) payload = { type: 'pattern.deprecated', pattern, reason: 'superseded', auto: rng.next() < 0.5 };
      else if (choice === 6) payload = { type: 'pattern.regressed', pattern, finding: `F${rng.int(5)}`, ...scope };
      else if (choice === 7) {
        const role = rng.pick(ROLES);
        // a summary written for the current candidates, so format-patterns can take the summary path
        const basis = currentBasis(store, { role, issue: null, run: null, labels: [], files: [], phase: null });
        payload = { type: 'summary.stored', role, basis, text: `- ${role} patterns, condensed` };
      } else {
        const extra = rng.pick(rows);
        appendEvents(store, [
          { type: 'pattern.reinforced', pattern: extra.id, ...scope },
          {
            type: 'pattern.ignored',
            pattern: target.id,
            role: target.role,
            weight: 1,
            finding: 'F9',
            retract: true,
            ...scope,
          },
        ]);
        count('batch');
        continue;
      }
      appendEvents(store, [payload]);
      count(payload.type);
    }
    if (rng.next() < 0.02) {
      // a store reopened mid-sequence (a new process) catches up from its mark
      const j = stores.indexOf(store);
      store.close();
      stores[j] = openTestStore(store.location.root, store.project);
      count('reopen');
    }
  }
  return counts;
}

/** A project with a few deliberations and some feedback, built in-process at pinned times. */
function smallHistory(root: string, seed = 3, ops = 40): Store {
  const store = openTestStore(root);
  drive([store], ops, seed);
  store.refresh(eventFollower(store));
  return store;
}

// ---------------------------------------------------------------- tests

describe('replay equals live', () => {
  it('covers every table the spec names', () => {
    expect(EVENT_LOG_TABLES).toEqual(
      expect.arrayContaining(['patterns', 'deliberations', 'sightings', 'injections', 'dismissals', 'outcomes', 'summaries']),
    );
  });

  it('600 seeded random operations over two projects leave exactly the state `cairn rebuild` replays', () => {
    const root = tempProject();
    // fixed project ids: pattern ids hash them, and ties break by id, so the run is the same every time
    const stores = [openTestStore(root, 'first-project'), openTestStore(root, 'second-project')];
    const counts = drive(stores, 600, 20260105);

    // the sequence really exercised what it claims to
    expect(counts.store).toBeGreaterThan(150);
    for (const k of [
      'linked:text',
      'linked:self',
      'linked:explicit',
      'store:already',
      'feedback:penalised',
      'feedback:confirmed',
      'feedback:pass',
      'observed:new',
      'observed:seen',
      'observed:merged',
      'observed:echo',
      'format:full',
      'format:truncated',
      'format:summary',
      'pattern.ignored',
      'pattern.reinforced',
      'pattern.aged',
      'pattern.outcome',
      'pattern.promoted',
      'pattern.deprecated',
      'pattern.regressed',
      'summary.stored',
      'reopen',
    ]) {
      expect(counts[k] ?? 0, k).toBeGreaterThan(0);
    }

    stores[0].refresh(eventFollower(stores[0])); // the other store's last appends
    const live = snapshot(patternDb(stores[0]));
    for (const s of stores) s.close();
    expect((live.patterns as unknown[][]).length).toBeGreaterThan(30);
    expect((live.injections as unknown[][]).length).toBeGreaterThan(50);
    expect(live.dismissals.length).toBeGreaterThan(5);
    expect(live.outcomes.length).toBeGreaterThan(5);
    expect(live.links.length).toBeGreaterThan(50);
    const projects = new Set((live.deliberations as unknown[][]).map((r) => r[0]));
    expect(projects.size).toBe(2);

    const { report } = rebuildByProcess(root);
    expect(report).toMatchObject({ rebuilt: true, skipped: 0, applied: logLines(root).length });
    expect(snapshotFile(root)).toEqual(live);
  });

  it('deleting the database rebuilds it from the log on the next open', () => {
    const root = tempProject();
    const store = smallHistory(root);
    const live = snapshot(patternDb(store));
    store.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath(root) + suffix, { force: true });
    const reopened = openTestStore(root);
    expect(snapshot(patternDb(reopened))).toEqual(live);
    expect(existsSync(dbPath(root))).toBe(true);
  });

  it('a database of another schema is emptied and built again from the logs on its next open: the same state, token counts and embeddings kept', () => {
    const root = tempProject();
    const store = smallHistory(root);
    const live = snapshot(patternDb(store));
    store.close();
    const old = new BetterSqlite3(dbPath(root));
    old.exec(`INSERT INTO token_counts (key, tokens) VALUES ('k1', 7); INSERT INTO embeddings (key, vector) VALUES ('e1', x'00000000');
      DROP INDEX patterns_rank_immune; ALTER TABLE patterns ADD COLUMN from_before INTEGER; CREATE TABLE left_over (x); DELETE FROM links;`);
    old.pragma('user_version = 17'); // a version of an older cairn
    old.close();
    const db = patternDb(openTestStore(root));
    expect(snapshot(db)).toEqual(live);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('left_over', 'patterns_rank_immune')").pluck().all()).toEqual([
      'patterns_rank_immune',
    ]);
    expect(db.prepare("SELECT tokens FROM token_counts WHERE key = 'k1'").pluck().get()).toBe(7);
    expect(db.prepare('SELECT COUNT(*) FROM embeddings').pluck().get()).toBe(1);
  });

  it('the schema version is the schema: a database of this version is opened as it is', () => {
    const root = tempProject();
    smallHistory(root).close();
    const before = new BetterSqlite3(dbPath(root));
    const tables = before.prepare('SELECT name, sql FROM sqlite_master ORDER BY name').all();
    before.exec("INSERT INTO meta (key, value) VALUES ('probe', 'kept')");
    before.close();
    const db = patternDb(openTestStore(root));
    expect(db.prepare("SELECT value FROM meta WHERE key = 'probe'").pluck().get()).toBe('kept');
    expect(db.prepare('SELECT name, sql FROM sqlite_master ORDER BY name').all()).toEqual(tables);
  });

  it('a log written before evidence aged (an older cairn’s demo) replays to a sane state: its PASSes untested, its dismissals aged, every rate in 0..1', () => {
    const root = tempProject();
    const log = readFileSync(join(FIXTURES, 'events', 'written-before-evidence-aging.jsonl'), 'utf8');
    const project = JSON.parse(log.split('\n')[0]).project;
    writeFileSync(eventsPath(root), log);
    const store = openTestStore(root, project);
    const patterns = listPatterns(patternDb(store), project, { includeDeprecated: true });
    expect(patterns.length).toBeGreaterThan(10);
    const now = Date.parse('2026-11-05T00:00:00Z');
    for (const p of patterns) {
      const f = scorePattern(p, { now, role: p.role });
      expect(f.rate, p.text).toBeGreaterThan(0);
      expect(f.rate, p.text).toBeLessThan(1);
      expect(Number.isFinite(f.base)).toBe(true);
    }
    // its PASS reinforcements named no finding: untested credit, nothing validated by them
    const reinforced = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'pattern.reinforced' && !e.finding);
    expect(reinforced.length).toBeGreaterThan(0);
    for (const e of reinforced)
      expect(patterns.find((p) => p.id === e.pattern)).toMatchObject({
        reinforcement_count: 0,
        was_validated: 0,
        held: 0,
      });
    expect(
      run('format-patterns', ['--role', 'auditor', '--project', project, '--strict'], {
        cwd: root,
        env: { CAIRN_NOW: '2026-11-05T00:00:00Z' },
      }).stdout,
    ).toMatch(/^=== HISTORICAL PATTERNS \(auditor\) ===/);
    const live = snapshot(patternDb(store));
    store.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(live);
  });

  it('the same log replays to the same state whichever process rebuilt it', () => {
    const root = tempProject();
    const store = smallHistory(root, 11);
    const live = snapshot(patternDb(store));
    store.close();
    rebuildByProcess(root);
    const first = snapshotFile(root);
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(first);
    expect(first).toEqual(live);
  });
});

describe('incremental catch-up', () => {
  it("another process's append is seen on the next sync, without a rebuild", () => {
    const root = tempProject();
    const store = smallHistory(root);
    const before = logLines(root).length;
    const r = run(
      'store-deliberation',
      ['--role', 'judge', '--issue', 'LED-104', '--run', 'r9', '--file', fixturePath('led-102-r1-review-judge.md'), '--json', '--strict'],
      { cwd: root },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { deliberation: string; patterns: unknown[]; links: unknown[] };
    expect(logLines(root).length).toBe(before + 1 + out.patterns.length + out.links.length);

    // that process applied its own events to the shared database; this connection just sees them
    expect(store.refresh(eventFollower(store))).toMatchObject({ rebuilt: false });
    const row = patternDb(store)
      .prepare('SELECT role, issue, run FROM deliberations WHERE project = ? AND id = ?')
      .get(store.project, out.deliberation);
    expect(row).toEqual({ role: 'judge', issue: 'LED-104', run: 'r9' });
    const live = snapshot(patternDb(store));
    store.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(live);
  });

  it('a tail that arrived without being applied (a fast-forward pull) is applied alone', () => {
    const root = tempProject();
    const store = openTestStore(root, 'shared-id');
    drive([store], 40, 17);
    store.refresh(eventFollower(store));
    // a clone of the project, with its own database, learns more; its log then arrives here whole
    const clone = tempProject();
    writeFileSync(eventsPath(clone), readFileSync(eventsPath(root)));
    const before = logLines(root).length;
    for (const file of ['led-101-r2-plan-auditor.md', 'led-103-r1-plan-auditor.md']) {
      const r = run(
        'store-deliberation',
        ['--role', 'auditor', '--issue', 'LED-105', '--run', 'r1', '--project', 'shared-id', '--file', fixturePath(file), '--strict'],
        { cwd: clone },
      );
      expect(r.code, r.stderr).toBe(0);
    }
    const pulled = readFileSync(eventsPath(clone));
    writeFileSync(eventsPath(root), pulled);
    const added = logLines(root).length - before;
    expect(added).toBeGreaterThan(4);

    expect(store.refresh(eventFollower(store))).toEqual({ applied: added, skipped: 0, rebuilt: false });
    expect(store.refresh(eventFollower(store))).toEqual({ applied: 0, skipped: 0, rebuilt: false });
    const live = snapshot(patternDb(store));
    expect(live).toEqual(snapshotFile(clone)); // the same log, the same state, on both machines
    store.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(live);
  });

  it('events appended without being applied (a crash between append and apply) are applied on the next open (a tested reinforcement)', () => {
    const root = tempProject();
    const store = smallHistory(root);
    const target = patternDb(store)
      .prepare('SELECT id, reinforcement_count FROM patterns WHERE project = ? ORDER BY id LIMIT 1')
      .get(store.project) as { id: string; reinforcement_count: number };
    store.close();
    appendEventLines(store, [{ type: 'pattern.reinforced', pattern: target.id, issue: 'LED-101', run: 'r1', finding: 'A1' }]);
    const reopened = openTestStore(root);
    const after = patternDb(reopened)
      .prepare('SELECT reinforcement_count FROM patterns WHERE project = ? AND id = ?')
      .get(reopened.project, target.id) as { reinforcement_count: number };
    expect(after.reinforcement_count).toBe(target.reinforcement_count + 1);
  });
});

describe('indexes left to the background (a fresh clone at 100k patterns)', () => {
  it('format-patterns ranks the same without the rank indexes, and cairn rebuild --continue builds them', () => {
    const root = tempProject();
    const store = openTestStore(root, 'background-project'); // a fixed id: the same patterns every run
    drive([store], 200, 5);
    store.refresh(eventFollower(store));
    const { role } = patternDb(store)
      .prepare("SELECT role, COUNT(*) AS n FROM patterns WHERE lifecycle != 'deprecated' GROUP BY role ORDER BY n DESC LIMIT 1")
      .get() as { role: string };
    store.close();
    const block = () => {
      const r = run('format-patterns', ['--role', role, '--project', 'background-project', '--budget', '120', '--strict', '--json'], {
        cwd: root,
      });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { path: string; patterns: { id: string }[] };
    };
    const before = block();
    expect(before.path).toBe('truncated'); // the ranking that reads the rank indexes page by page
    expect(before.patterns.length).toBeGreaterThan(0);

    // as a fresh clone's last hook leaves the database: every event applied, the indexes set aside
    const db = new BetterSqlite3(dbPath(root));
    for (const name of Object.keys(EVENT_LOG_INDEXES)) db.exec(`DROP INDEX ${name}`);
    const mark = JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'log:events'").get() as { value: string }).value);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'log:events'").run(JSON.stringify({ ...mark, building: true }));
    db.close();
    expect(block()).toEqual(before);

    const r = run('cairn', ['rebuild', '--continue', '--json', '--strict'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ applied: 0, skipped: 0, rebuilt: false, deferred: 0, packed: 0 }); // no list long enough to pack
    const after = new BetterSqlite3(dbPath(root));
    const names = (after.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[]).map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(Object.keys(EVENT_LOG_INDEXES)));
    expect(
      JSON.parse((after.prepare("SELECT value FROM meta WHERE key = 'log:events'").get() as { value: string }).value).building,
    ).toBeUndefined();
    after.close();
    expect(block()).toEqual(before);
  });
});

describe('a rebuild racing an appender', () => {
  it('a line appended while the replay runs is applied by the next sync', () => {
    const root = tempProject();
    const store = openTestStore(root);
    // enough events that the replay checks its deadline part-way (every 64 applied), after reading the log
    const filler: EventPayload[] = Array.from({ length: 5000 }, (_, i) => ({
      type: 'pattern.aged',
      pattern: `p${i}`,
      issue: null,
      run: null,
    }));
    appendEventLines(store, filler);
    let appended = false;
    const racing = {
      passed() {
        if (!appended) {
          appended = true; // another process appends now, after the log was read, before the replay commits
          appendEventLines(store, [{ type: 'summary.stored', role: 'judge', basis: 'b', text: 'written meanwhile' }]);
        }
        return false;
      },
      remaining: () => Infinity,
      check: () => undefined,
      at: Infinity,
    } as unknown as Deadline;
    const report = rebuildIndex(store.database, eventFollower(store), { deadline: racing, warn: () => undefined });
    expect(appended).toBe(true);
    expect(report).toMatchObject({ rebuilt: true, applied: 5000 });

    store.refresh(eventFollower(store));
    const row = patternDb(store).prepare('SELECT text FROM summaries WHERE project = ? AND role = ?').get(store.project, 'judge');
    expect(row).toEqual({ text: 'written meanwhile' });
  });
});

describe('a torn last line (crash mid-append)', () => {
  it('is not applied, the next append starts a fresh line, and the fragment is reported and kept', () => {
    const root = tempProject();
    const store = smallHistory(root);
    const applied = snapshot(patternDb(store));
    store.close();

    // a writer died half-way through its line
    const size = readFileSync(eventsPath(root)).length;
    const whole = JSON.stringify({
      v: 1,
      id: nextUlid(Date.now()),
      ts: new Date().toISOString(),
      type: 'pattern.reinforced',
      project: store.project,
      pattern: 'p0',
      issue: 'X',
      run: 'r',
    });
    const fragment = whole.slice(0, 37);
    appendFileSync(eventsPath(root), fragment);

    // the next open applies everything before it and nothing of it
    const reopened = openTestStore(root);
    expect(reopened.refresh(eventFollower(reopened))).toEqual({ applied: 0, skipped: 0, rebuilt: false });
    expect(snapshot(patternDb(reopened))).toEqual(applied);

    // another process appends: its first line is not glued to the fragment
    const r = run(
      'store-deliberation',
      ['--role', 'sentinel', '--issue', 'LED-103', '--run', 'r1', '--file', fixturePath('led-103-r1-qa-sentinel.md'), '--json'],
      { cwd: root },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`cairn store-deliberation: events.jsonl: skipped the line at byte ${size}: invalid JSON`);
    const lines = logLines(root);
    const at = lines.indexOf(fragment);
    expect(at).toBeGreaterThan(0);
    expect(JSON.parse(lines[at + 1])).toMatchObject({ type: 'deliberation.stored', role: 'sentinel' });
    for (const [i, line] of lines.entries()) if (i !== at) expect(() => JSON.parse(line)).not.toThrow();

    // the live catch-up and a full rebuild agree, and both leave the fragment in the log
    expect(reopened.refresh(eventFollower(reopened))).toMatchObject({ rebuilt: false });
    const live = snapshot(patternDb(reopened));
    reopened.close();
    const { report, stderr } = rebuildByProcess(root);
    expect(report.skipped).toBe(1);
    expect(stderr).toContain(`events.jsonl: skipped the line at byte ${size}: invalid JSON`);
    expect(snapshotFile(root)).toEqual(live);
    expect(logLines(root)[at]).toBe(fragment);
  });

  it('a record torn just before its newline is complete: it is kept and applied after the heal', () => {
    const root = tempProject();
    const store = smallHistory(root);
    const target = patternDb(store)
      .prepare('SELECT id, success_count FROM patterns WHERE project = ? ORDER BY id LIMIT 1')
      .get(store.project) as { id: string; success_count: number };
    store.close();
    const last = JSON.parse(logLines(root).at(-1)!) as { id: string; ts: string };
    const whole = {
      v: 1,
      id: nextUlid(Date.parse(last.ts), last.id),
      ts: last.ts,
      type: 'pattern.reinforced',
      project: store.project,
      pattern: target.id,
      issue: 'X',
      run: 'r',
    };
    appendFileSync(eventsPath(root), JSON.stringify(whole)); // no newline
    const r = run('cairn', ['store-summary', '--role', 'auditor', '--strict'], { cwd: root, input: '- condensed' });
    expect(r.code, r.stderr).toBe(0);
    expect(logLines(root).at(-2)).toBe(JSON.stringify(whole));

    const reopened = openTestStore(root);
    const row = patternDb(reopened)
      .prepare('SELECT success_count FROM patterns WHERE project = ? AND id = ?')
      .get(reopened.project, target.id) as { success_count: number };
    expect(row.success_count).toBe(target.success_count + 1);
    const live = snapshot(patternDb(reopened));
    reopened.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(live);
  });
});

describe('a log whose prefix changed', () => {
  /** Lines of the log with `extra` inserted before line `at` (what a union merge produces). */
  function insertLines(root: string, at: number, extra: string[]): void {
    const lines = logLines(root);
    lines.splice(at, 0, ...extra);
    writeFileSync(eventsPath(root), lines.join('\n') + '\n');
  }

  it("a line merged into the middle (another machine's event) triggers a rebuild to the fresh-rebuild state", () => {
    const root = tempProject();
    const store = smallHistory(root, 5, 60);
    const lines = logLines(root);
    const tsOf = (line: string) => (JSON.parse(line) as { ts: string }).ts;
    let mid = Math.floor(lines.length / 2);
    while (tsOf(lines[mid]) === tsOf(lines[mid - 1])) mid++; // a boundary between two appends
    const before = JSON.parse(lines[mid - 1]) as { ts: string; id: string };
    const after = JSON.parse(lines[mid]) as { ts: string };
    expect(Date.parse(after.ts)).toBeGreaterThan(Date.parse(before.ts)); // there is room between them
    const target = patternDb(store)
      .prepare('SELECT id, role, text, success_count, sightings FROM patterns WHERE project = ? ORDER BY id LIMIT 1')
      .get(store.project) as {
      id: string;
      role: string;
      text: string;
      success_count: number;
      sightings: number;
    };
    // the other machine saw the same pattern once more, a millisecond after line mid-1
    const ts = new Date(Date.parse(before.ts) + 1).toISOString();
    const foreign = {
      v: 1,
      id: nextUlid(Date.parse(ts)),
      ts,
      type: 'pattern.observed',
      project: store.project,
      pattern: target.id,
      role: target.role,
      text: target.text,
      category: 'rule',
      issue: 'LED-999',
      run: 'm2',
      phase: 'plan',
      labels: ['merged'],
      files: [],
      deliberation: 'dforeign',
    };
    // the insertion lies outside the hashed first and last 4 KiB of the applied prefix
    const insertedAt = Buffer.byteLength(lines.slice(0, mid).join('\n') + '\n');
    expect(insertedAt).toBeGreaterThan(4096);
    expect(readFileSync(eventsPath(root)).length - insertedAt).toBeGreaterThan(4096);
    insertLines(root, mid, [JSON.stringify(foreign)]);

    expect(store.refresh(eventFollower(store))).toMatchObject({ rebuilt: true, skipped: 0 });
    const live = snapshot(patternDb(store));
    const row = patternDb(store)
      .prepare('SELECT success_count, sightings, labels, issues FROM patterns WHERE project = ? AND id = ?')
      .get(store.project, target.id) as {
      success_count: number;
      sightings: number;
      labels: string;
      issues: string;
    };
    expect(row.sightings).toBe(target.sightings + 1);
    expect(JSON.parse(row.labels)).toContain('merged');
    expect(JSON.parse(row.issues)).toContain('LED-999');
    store.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(live);
  });

  it('duplicated lines (a union merge that kept both copies) replay once: the state does not change', () => {
    const root = tempProject();
    const store = smallHistory(root, 9, 60);
    const original = snapshot(patternDb(store));
    const lines = logLines(root);
    const block = lines.slice(5, 25);
    insertLines(root, 30, block);

    expect(store.refresh(eventFollower(store))).toEqual({ rebuilt: true, skipped: 0, applied: lines.length }); // each event once
    expect(snapshot(patternDb(store))).toEqual(original);
    // and a copy of the last line at the end: the tail sorts before what was applied
    appendFileSync(eventsPath(root), lines.at(-1) + '\n');
    expect(store.refresh(eventFollower(store))).toMatchObject({ rebuilt: true });
    expect(snapshot(patternDb(store))).toEqual(original);
    store.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(original);
  });

  it('a log that shrank (rotated or truncated) is replayed from scratch', () => {
    const root = tempProject();
    const store = smallHistory(root, 13, 60);
    const lines = logLines(root);
    writeFileSync(eventsPath(root), lines.slice(0, lines.length - 10).join('\n') + '\n');
    expect(store.refresh(eventFollower(store))).toMatchObject({ rebuilt: true, applied: lines.length - 10 });
    const live = snapshot(patternDb(store));
    store.close();
    rebuildByProcess(root);
    expect(snapshotFile(root)).toEqual(live);
    // and a log that disappeared leaves an empty index, not stale rows
    rmSync(eventsPath(root));
    const reopened = openTestStore(root);
    reopened.refresh(eventFollower(reopened));
    for (const rows of Object.values(snapshot(patternDb(reopened)))) expect(rows).toEqual([]);
  });
});
