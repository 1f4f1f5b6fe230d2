import { describe, it, expect } from 'vitest';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Database } from '../lib/store/db.js';
import { follow, followerStatus, rebuildIndex, type LogFollower } from '../lib/store/follower.js';
import { Deadline } from '../lib/core/deadline.js';
import { CairnError } from '../lib/core/errors.js';
import { tempDir } from './helpers.js';

// The one log→index follower: incremental, rebuilt on a changed prefix, and committed in slices so a
// replay cut short by a deadline is resumed — never restarted, never applied twice.

interface Item {
  k: string;
  v: string;
}

function setup(): { dir: string; db: Database; log: string } {
  const dir = tempDir('cairn-follower-');
  const db = openDatabase(join(dir, 'state.db'), {
    deadline: new Deadline(0),
    strict: true,
    warn: () => undefined,
    within: dir,
  });
  db.exec('CREATE TABLE toy (name TEXT, k TEXT, v TEXT, seq INTEGER PRIMARY KEY)');
  return { dir, db, log: join(dir, 'log.jsonl') };
}

function toy(name: string, path: string, ordered: boolean): LogFollower<Item> {
  return {
    name,
    path,
    parse: (text) => {
      try {
        const v = JSON.parse(text);
        return typeof v.k === 'string' ? v : undefined;
      } catch {
        return undefined;
      }
    },
    apply: (db, item) => void db.prepare('INSERT INTO toy (name, k, v) VALUES (?, ?, ?)').run(name, item.k, item.v),
    reset: (db) => void db.prepare('DELETE FROM toy WHERE name = ?').run(name),
    ...(ordered ? { orderKey: (item: Item) => item.k } : {}),
  };
}

const lines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => JSON.stringify({ k: String(from + i).padStart(6, '0'), v: `v${from + i}` }) + '\n').join('');
const rows = (db: Database, name: string) => db.prepare('SELECT k, v FROM toy WHERE name = ? ORDER BY seq').all(name) as Item[];
const opts = { deadline: new Deadline(0), warn: () => undefined };

/** A deadline that passes after `n` checks: a replay cut short part-way, deterministically. */
function passesAfter(n: number): Deadline {
  let calls = 0;
  return { passed: () => ++calls > n, remaining: () => 1, check: () => undefined, at: 0, ms: 1 } as unknown as Deadline;
}

describe('incremental follow', () => {
  it('applies a grown tail alone and costs nothing when the log is unchanged', () => {
    const { db, log } = setup();
    const f = toy('a', log, false);
    writeFileSync(log, lines(0, 10));
    expect(follow(db, f, opts)).toEqual({ applied: 10, skipped: 0, rebuilt: false });
    appendFileSync(log, lines(10, 13) + '{"k": broken\n');
    expect(follow(db, f, opts)).toEqual({ applied: 3, skipped: 1, rebuilt: false });
    expect(follow(db, f, opts)).toEqual({ applied: 0, skipped: 0, rebuilt: false });
    expect(rows(db, 'a').map((r) => r.v)).toEqual(Array.from({ length: 13 }, (_, i) => `v${i}`));
  });

  it('rebuilds when the applied prefix changed (a rotation rewrote the log)', () => {
    const { db, log } = setup();
    const f = toy('a', log, false);
    writeFileSync(log, lines(0, 10));
    follow(db, f, opts);
    writeFileSync(log, lines(5, 12));
    expect(follow(db, f, opts)).toMatchObject({ rebuilt: true, applied: 7 });
    expect(rows(db, 'a').map((r) => r.k)).toEqual(Array.from({ length: 7 }, (_, i) => String(5 + i).padStart(6, '0')));
  });

  it("resets only its own log's rows: two logs share one database", () => {
    const { db, dir, log } = setup();
    const other = join(dir, 'other.jsonl');
    writeFileSync(log, lines(0, 5));
    writeFileSync(other, lines(100, 103));
    follow(db, toy('a', log, false), opts);
    follow(db, toy('b', other, false), opts);
    rebuildIndex(db, toy('a', log, false), opts);
    expect(rows(db, 'a')).toHaveLength(5);
    expect(rows(db, 'b')).toHaveLength(3);
  });
});

describe('a replay cut short by the deadline keeps its progress', () => {
  it('file order: each call commits what it applied, the next resumes, the end state equals one full replay', () => {
    const { db, log } = setup();
    const f = toy('a', log, false);
    writeFileSync(log, lines(0, 3000));
    const progress: number[] = [];
    for (let call = 0; call < 100; call++) {
      try {
        follow(db, f, { deadline: passesAfter(3), warn: () => undefined, sliceMs: 0 });
        break;
      } catch (err) {
        expect(err).toBeInstanceOf(CairnError);
        expect((err as CairnError).kind).toBe('deadline');
        progress.push(followerStatus(db, f).appliedBytes);
      }
    }
    expect(progress.length).toBeGreaterThan(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b)); // always forward
    expect(new Set(progress).size).toBe(progress.length);
    expect(rows(db, 'a').map((r) => r.v)).toEqual(Array.from({ length: 3000 }, (_, i) => `v${i}`));
    expect(followerStatus(db, f)).toMatchObject({ inSync: true, rebuilding: false });
  });

  it('sorted order: a merged log is replayed in key order across several cut-short calls, each key once', () => {
    const { db, log } = setup();
    const f = toy('a', log, true);
    // a union merge: two machines' halves interleaved out of order, one line kept twice
    const a = lines(0, 1500).split('\n').filter(Boolean);
    const b = lines(1500, 3000).split('\n').filter(Boolean);
    writeFileSync(log, [...b.slice(0, 700), ...a, a[10], ...b.slice(700)].join('\n') + '\n');
    let calls = 0;
    for (;;) {
      calls++;
      try {
        follow(db, f, { deadline: passesAfter(2), warn: () => undefined, sliceMs: 0 });
        break;
      } catch (err) {
        expect((err as CairnError).kind).toBe('deadline');
      }
      expect(calls).toBeLessThan(200);
    }
    expect(calls).toBeGreaterThan(2);
    expect(rows(db, 'a').map((r) => r.k)).toEqual(Array.from({ length: 3000 }, (_, i) => String(i).padStart(6, '0')));
    expect(followerStatus(db, f)).toMatchObject({ inSync: true, rebuilding: false });
  });

  it('a resumed sorted replay starts over when a line that sorts earlier was merged in meanwhile', () => {
    const { db, log } = setup();
    const f = toy('a', log, true);
    writeFileSync(log, lines(0, 5) + lines(10, 2000) + lines(5, 6)); // out of order: forces the sorted replay
    for (let call = 0; !followerStatus(db, f).rebuilding; call++) {
      expect(call).toBeLessThan(100);
      expect(() => follow(db, f, { deadline: passesAfter(3), warn: () => undefined, sliceMs: 0 })).toThrow(/deadline/);
    }
    appendFileSync(log, lines(6, 10)); // keys 6–9 sort before what the replay applied
    follow(db, f, opts);
    expect(rows(db, 'a').map((r) => r.k)).toEqual(Array.from({ length: 2000 }, (_, i) => String(i).padStart(6, '0')));
  });
});

describe('a first build sets aside what only readers need (finish)', () => {
  /** The toy follower with a reader's index: reset drops it, finish builds it (as the event log does). */
  function indexed(log: string): LogFollower<Item> & { finished: number } {
    const f = {
      ...toy('a', log, true),
      finished: 0,
      reset: (db: Database) => {
        db.exec('DROP INDEX IF EXISTS toy_k');
        db.prepare('DELETE FROM toy WHERE name = ?').run('a');
      },
      finish: (db: Database) => {
        f.finished++;
        db.exec('CREATE INDEX IF NOT EXISTS toy_k ON toy (k)');
      },
    };
    return f;
  }
  const hasIndex = (db: Database) => Boolean(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'toy_k'").get());

  it('a fresh build cut short resumes in file order, and the index is built once, at the end', () => {
    const { db, log } = setup();
    db.exec('CREATE INDEX toy_k ON toy (k)');
    const f = indexed(log);
    writeFileSync(log, lines(0, 3000));
    let calls = 0;
    for (; ; calls++) {
      expect(calls).toBeLessThan(100);
      try {
        follow(db, f, { deadline: passesAfter(3), warn: () => undefined, sliceMs: 0 });
        break;
      } catch (err) {
        expect((err as CairnError).kind).toBe('deadline');
        expect(hasIndex(db)).toBe(false); // set aside while the build runs
        expect(followerStatus(db, f).rebuilding).toBe(true);
      }
    }
    expect(calls).toBeGreaterThan(2);
    expect(f.finished).toBe(1);
    expect(hasIndex(db)).toBe(true);
    expect(rows(db, 'a').map((r) => r.v)).toEqual(Array.from({ length: 3000 }, (_, i) => `v${i}`));
    expect(followerStatus(db, f)).toMatchObject({ inSync: true, rebuilding: false });
    appendFileSync(log, lines(3000, 3005)); // later appends are applied with the index in place
    expect(follow(db, f, opts)).toMatchObject({ applied: 5, rebuilt: false });
    expect(f.finished).toBe(1);
    expect(hasIndex(db)).toBe(true);
  });

  it('with less than half its deadline left, a run leaves the index to the next run, which builds it', () => {
    const { db, log } = setup();
    const f = indexed(log);
    writeFileSync(log, lines(0, 50));
    const late = {
      passed: () => false,
      remaining: () => 10,
      check: () => undefined,
      at: Date.now() + 10,
      ms: 1000,
    } as unknown as Deadline;
    expect(() => follow(db, f, { deadline: late, warn: () => undefined })).toThrow(/deadline of 1000 ms near/);
    expect(rows(db, 'a')).toHaveLength(50); // what was replayed stays
    expect(hasIndex(db)).toBe(false);
    expect(follow(db, f, opts)).toMatchObject({ applied: 0 });
    expect(f.finished).toBe(1);
    expect(hasIndex(db)).toBe(true);
    expect(followerStatus(db, f)).toMatchObject({ inSync: true, rebuilding: false });
  });
});

describe('a finish too long for a hook (finishLater)', () => {
  it('under a deadline it is handed on, the rows are all there, and a run without one builds it', () => {
    const { db, log } = setup();
    let handedOn = 0;
    let finished = 0;
    const f: LogFollower<Item> = {
      ...toy('a', log, true),
      finish: () => void finished++,
      finishLater: () => (handedOn++, true),
    };
    writeFileSync(log, lines(0, 100));
    const hook = { deadline: new Deadline(60_000), warn: () => undefined };
    expect(follow(db, f, hook)).toMatchObject({ applied: 100 });
    expect(follow(db, f, hook)).toMatchObject({ applied: 0 }); // the next hook takes no write lock and hands it on again
    expect([handedOn, finished]).toEqual([2, 0]);
    expect(rows(db, 'a')).toHaveLength(100);
    expect(followerStatus(db, f)).toMatchObject({ inSync: false, rebuilding: true });
    follow(db, f, opts); // no deadline: `cairn rebuild --continue`
    expect([handedOn, finished]).toEqual([2, 1]);
    expect(followerStatus(db, f)).toMatchObject({ inSync: true, rebuilding: false });
  });
});
