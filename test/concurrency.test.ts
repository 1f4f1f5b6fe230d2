import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deliberationFixtures, fixturePath, observedEvent, openTestStore, runAsync, tempProject, type RunResult } from './helpers.js';
import BetterSqlite3 from 'better-sqlite3';
import { appendEvents, patternDb, eventFollower } from '../lib/events/log.js';
import { patternId } from '../lib/core/ids.js';

// Many hooks run at once (SPEC §2): appends are whole lines under the lock, and no update is lost,
// neither in the log nor in the database derived from it.

// Generous: on a loaded machine a deadline would make a writer fail open (visible here as exit 1
// under --strict), which is the contract but not what this test is about.
const ENV = { CAIRN_DEADLINE_MS: '60000' };

interface LogEvent {
  id: string;
  ts: string;
  type: string;
  project: string;
  deliberation?: string;
  pattern?: string;
  patterns?: string[];
  echo?: boolean;
}

function readLog(root: string): LogEvent[] {
  const text = readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as LogEvent); // every line is whole JSON: nothing interleaved
}

function expectOrderedUnique(events: LogEvent[]): void {
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  for (let i = 1; i < events.length; i++) {
    const [a, b] = [events[i - 1], events[i]];
    expect(a.ts < b.ts || (a.ts === b.ts && a.id < b.id), `line ${i + 1} sorts after line ${i}`).toBe(true);
  }
}

function ok(r: RunResult): RunResult {
  expect(r.code, r.stderr).toBe(0);
  return r;
}

describe('concurrent writers', () => {
  it('8 store-deliberation processes at once lose no event, in the log or the database', async () => {
    const root = tempProject();
    // the three auditor plans share pattern texts, so writers race on the same patterns too
    const fixtures = deliberationFixtures()
      .filter((f) => f.role === 'auditor' || f.phase === 'review')
      .slice(0, 8);
    expect(fixtures).toHaveLength(8);
    const results = await Promise.all(
      fixtures.map((f) =>
        runAsync(
          'store-deliberation',
          ['--role', f.role, '--issue', f.issue, '--run', f.run, '--phase', f.phase, '--file', fixturePath(f.file), '--json', '--strict'],
          { cwd: root, env: ENV },
        ),
      ),
    );
    const outputs = results.map(
      (r) =>
        JSON.parse(ok(r).stdout) as {
          deliberation: string;
          patterns: { id: string; status: string }[];
          links: unknown[];
        },
    );

    const events = readLog(root);
    expectOrderedUnique(events);
    const stored = events.filter((e) => e.type === 'deliberation.stored');
    const observed = events.filter((e) => e.type === 'pattern.observed');
    expect(stored.map((e) => e.deliberation).sort()).toEqual(outputs.map((o) => o.deliberation).sort());
    expect(observed).toHaveLength(outputs.reduce((n, o) => n + o.patterns.length, 0));
    const linked = events.filter((e) => e.type === 'finding.linked');
    expect(linked).toHaveLength(outputs.reduce((n, o) => n + o.links.length, 0));
    expect(events).toHaveLength(stored.length + observed.length + linked.length);
    for (const o of outputs) {
      const mine = observed.filter((e) => e.deliberation === o.deliberation).map((e) => e.pattern);
      expect(mine).toEqual(o.patterns.map((p) => p.id));
    }

    // the database (after catching up) has every deliberation and every sighting
    const store = openTestStore(root);
    store.refresh(eventFollower(store));
    const ids = (patternDb(store).prepare('SELECT id FROM deliberations WHERE project = ?').all(store.project) as { id: string }[]).map(
      (r) => r.id,
    );
    expect(ids.sort()).toEqual(outputs.map((o) => o.deliberation).sort());
    const perPattern = new Map<string, number>();
    for (const e of observed) perPattern.set(e.pattern!, (perPattern.get(e.pattern!) ?? 0) + 1);
    const rows = patternDb(store).prepare('SELECT id, sightings, success_count FROM patterns WHERE project = ?').all(store.project) as {
      id: string;
      sightings: number;
      success_count: number;
    }[];
    expect(new Map(rows.map((r) => [r.id, r.sightings]))).toEqual(perPattern);
    for (const r of rows) expect(r.success_count).toBe(r.sightings); // no echoes or feedback here
    expect([...perPattern.values()].some((n) => n >= 2)).toBe(true); // the race on shared patterns happened
  });

  it("writers that pack the same posting lists at once: each merges its near-duplicate, and every packed list is the index's", async () => {
    const root = tempProject();
    const store = openTestStore(root, 'ledgerly');
    // 400 patterns that share most of their words: their terms' lists are long enough to pack
    const texts = Array.from({ length: 400 }, (_, i) => `Every endpoint of service ${i} must document its error codes in runbook ${i * 7}`);
    appendEvents(
      store,
      texts.map((text) => observedEvent('ledgerly', text, { deliberation: 'd0', issue: 'LED-0' })),
    );
    store.close();
    const writers = [3, 50, 101, 202, 303, 399];
    const results = await Promise.all(
      writers.map((i) =>
        runAsync(
          'store-deliberation',
          ['--role', 'auditor', '--issue', `LED-${i}`, '--run', 'r1', '--project', 'ledgerly', '--json', '--strict'],
          {
            cwd: root,
            env: ENV,
            input: `## Review\nLooks fine.\n\n## Accumulated Patterns\n- ${texts[i]} as well\n`,
          },
        ),
      ),
    );
    results.forEach((r, k) => {
      expect(JSON.parse(ok(r).stdout).patterns).toEqual([
        expect.objectContaining({ id: patternId('ledgerly', 'auditor', texts[writers[k]]), status: 'merged' }),
      ]);
      expect(r.stderr).not.toMatch(/packed/);
    });

    const db = new BetterSqlite3(join(root, '.cairn', 'cache', 'state.db'), { readonly: true });
    try {
      const packed = db.prepare('SELECT role, term, through, postings FROM pattern_postings').all() as {
        role: string;
        term: string;
        through: number;
        postings: Buffer;
      }[];
      expect(packed.length).toBeGreaterThan(0);
      const rows = db.prepare(
        "SELECT seq, ntok FROM pattern_terms WHERE project = 'ledgerly' AND role = ? AND term = ? AND seq <= ? ORDER BY seq",
      );
      for (const { role, term, through, postings } of packed) {
        const bytes = new Uint8Array(postings); // seqs (4 bytes each), then sizes (2 bytes each)
        const n = bytes.byteLength / 6;
        const seqs = [...new Int32Array(bytes.buffer, 0, n)];
        const sizes = [...new Uint16Array(bytes.buffer, 4 * n, n)];
        const index = rows.all(role, term, through) as { seq: number; ntok: number }[];
        expect(seqs).toEqual(index.map((r) => r.seq));
        expect(sizes).toEqual(index.map((r) => r.ntok));
      }
    } finally {
      db.close();
    }
  });

  it('writers and injecting readers at once: every injection is recorded', async () => {
    const root = tempProject();
    const auditor = deliberationFixtures().find((f) => f.role === 'auditor')!;
    ok(
      await runAsync(
        'store-deliberation',
        ['--role', 'auditor', '--issue', auditor.issue, '--run', 'r0', '--file', fixturePath(auditor.file), '--strict'],
        { cwd: root, env: ENV },
      ),
    );

    const others = deliberationFixtures()
      .filter((f) => f.role !== 'auditor')
      .slice(0, 4);
    const writers = others.map((f) =>
      runAsync(
        'store-deliberation',
        ['--role', f.role, '--issue', f.issue, '--run', f.run, '--file', fixturePath(f.file), '--json', '--strict'],
        { cwd: root, env: ENV },
      ),
    );
    const readers = [1, 2, 3, 4].map((n) =>
      runAsync('format-patterns', ['--role', 'auditor', '--issue', 'LED-200', '--run', `r${n}`, '--json', '--strict'], {
        cwd: root,
        env: ENV,
      }),
    );
    const written = (await Promise.all(writers)).map((r) => JSON.parse(ok(r).stdout) as { deliberation: string });
    const formatted = (await Promise.all(readers)).map((r) => JSON.parse(ok(r).stdout) as { patterns: { id: string }[] });

    const events = readLog(root);
    expectOrderedUnique(events);
    const injected = events.filter((e) => e.type === 'pattern.injected');
    expect(injected).toHaveLength(4);
    expect(injected.map((e) => [...e.patterns!].sort()).sort()).toEqual(formatted.map((f) => f.patterns.map((p) => p.id).sort()).sort());
    expect(events.filter((e) => e.type === 'deliberation.stored')).toHaveLength(1 + written.length);

    const store = openTestStore(root);
    store.refresh(eventFollower(store));
    const injections = patternDb(store)
      .prepare("SELECT COUNT(*) AS n FROM injections WHERE project = ? AND issue = 'LED-200'")
      .get(store.project) as { n: number };
    expect(injections.n).toBe(formatted.reduce((n, f) => n + f.patterns.length, 0));
    const deliberations = patternDb(store).prepare('SELECT COUNT(*) AS n FROM deliberations WHERE project = ?').get(store.project) as {
      n: number;
    };
    expect(deliberations.n).toBe(1 + written.length);
  });
});
