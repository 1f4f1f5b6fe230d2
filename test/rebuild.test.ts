import { describe, it, expect } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { observedPatterns, run, tempProject } from './helpers.js';
import { EVENT_LOG_INDEXES } from '../lib/store/db.js';

/** A fresh clone: an event log of `count` patterns sharing the word 'refund', and no database. */
function freshClone(count: number): string {
  const root = tempProject();
  observedPatterns(
    root,
    Array.from({ length: count }, (_, i) => `refund rule ${i} for invoices of kind ${i % 7}`),
    true,
  );
  return root;
}

const rebuild = (root: string, ...args: string[]) => run('cairn', ['rebuild', '--project', 'p1', '--strict', ...args], { cwd: root });

describe('cairn rebuild --continue --job NAME (the background jobs, by name)', () => {
  it('takes only the steps of the named job', () => {
    const root = freshClone(400);
    const finish = rebuild(root, '--continue', '--job', 'finish-index', '--json');
    expect(finish.code, finish.stderr).toBe(0);
    const finished = JSON.parse(finish.stdout);
    expect(finished).toMatchObject({ applied: 400, packed: expect.any(Number) });
    expect(finished.packed).toBeGreaterThan(0); // 'refund': every pattern holds it
    expect(finished).not.toHaveProperty('deferred');

    const kept = rebuild(root, '--continue', '--job', 'apply-kept', '--json');
    expect(kept.code, kept.stderr).toBe(0);
    expect(JSON.parse(kept.stdout)).toEqual({ applied: 0, skipped: 0, rebuilt: false, deferred: 0 });

    const pack = rebuild(root, '--continue', '--job', 'pack-postings', '--json');
    expect(pack.code, pack.stderr).toBe(0);
    expect(JSON.parse(pack.stdout)).toEqual({ packed: 0 }); // packed by finish-index already
    rmSync(root, { recursive: true, force: true });
  });

  it('finish-index builds a large index itself under the background deadline it is started with', () => {
    // A fresh clone's last hook hands a finish of ≥ 100,000 term rows to this job (lib/events/log.ts
    // finishLater); the job runs with CAIRN_DEADLINE_MS of ten minutes (lib/store/background.ts) and must
    // not hand it on again, or the indexes are never built.
    const root = freshClone(50);
    expect(rebuild(root, '--continue', '--job', 'finish-index').code).toBe(0);
    const path = join(root, '.cairn', 'cache', 'state.db');
    const db = new BetterSqlite3(path);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
      INSERT INTO pattern_terms (project, role, term, pattern, seq) SELECT 'p1', 'auditor', 'filler' || (i % 997),
      'p' || i, i FROM n`);
    for (const name of Object.keys(EVENT_LOG_INDEXES)) db.exec(`DROP INDEX IF EXISTS ${name}`);
    const mark = () => JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'log:events'").get() as { value: string }).value);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'log:events'").run(JSON.stringify({ ...mark(), building: true }));

    const job = run('cairn', ['rebuild', '--continue', '--quiet', '--project', 'p1', '--job', 'finish-index'], {
      cwd: root,
      env: { CAIRN_DEADLINE_MS: '600000' },
    });
    expect(job.code, job.stderr).toBe(0);
    expect(mark().building).toBeUndefined();
    const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[]).map((x) => x.name);
    expect(indexes).toEqual(expect.arrayContaining(Object.keys(EVENT_LOG_INDEXES)));
    db.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('still takes every step for --continue alone, the spelling hosts and people already use', () => {
    const root = freshClone(400);
    const all = rebuild(root, '--continue', '--json');
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ applied: 400, deferred: 0, packed: expect.any(Number) });
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses a job it does not have, or --job without --continue, as a usage error', () => {
    const root = freshClone(3);
    for (const args of [
      ['--continue', '--job', 'sanitize'],
      ['--continue', '--job', 'nonsense'],
      ['--job', 'apply-kept'],
    ]) {
      const r = rebuild(root, ...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(/^cairn rebuild: .*--job takes, with --continue, one of finish-index, apply-kept, pack-postings/m);
    }
    rmSync(root, { recursive: true, force: true });
  });
});
