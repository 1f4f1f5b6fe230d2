import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { switchToWal, type Database } from '../lib/store/db.js';
import { REPO, tempProject } from './helpers.js';

// The one SQLite opener (lib/store/db.ts). Processes that open a new database at the same moment race
// to switch it to WAL, and SQLite answers SQLITE_BUSY at once to one of them.

/** A database whose switch to WAL is refused `busy` times, as by a concurrent opener. */
function contended(busy: number): { db: Database; tries: () => number } {
  let tries = 0;
  const db = {
    pragma: (sql: string) => {
      expect(sql).toBe('journal_mode = WAL');
      if (++tries <= busy) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      return [{ journal_mode: 'wal' }];
    },
  } as unknown as Database;
  return { db, tries: () => tries };
}

describe('switchToWal', () => {
  it('tries again while another opener holds the database, until it is switched', () => {
    const { db, tries } = contended(3);
    switchToWal(db, Date.now() + 1000);
    expect(tries()).toBe(4);
  });

  it('gives up when its time is up, with the error SQLite gave', () => {
    const { db } = contended(Infinity);
    const started = Date.now();
    expect(() => switchToWal(db, started + 60)).toThrow(/database is locked/);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('does not retry any other error', () => {
    let tries = 0;
    const db = {
      pragma: () => (
        (tries += 1),
        (() => {
          throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
        })()
      ),
    } as unknown as Database;
    expect(() => switchToWal(db, Date.now() + 1000)).toThrow(/disk I\/O error/);
    expect(tries).toBe(1);
  });
});

describe('opening a new database', () => {
  it('three processes opening the same new store at once all get it (10 times over)', async () => {
    const child = `
      const { openDatabase } = await import(${JSON.stringify(join(REPO, 'dist', 'lib', 'store', 'db.js'))});
      const { Deadline } = await import(${JSON.stringify(join(REPO, 'dist', 'lib', 'core', 'deadline.js'))});
      const dir = process.argv[1];
      openDatabase(dir + '/cache/state.db', { deadline: new Deadline(2000), strict: true, warn: () => {}, within: dir }).close();`;
    const failures: string[] = [];
    for (let round = 0; round < 10; round++) {
      const dir = join(tempProject(), '.cairn');
      const codes = await Promise.all(
        [0, 1, 2].map(
          () =>
            new Promise<string>((resolve) => {
              const p = spawn(process.execPath, ['--input-type=module', '-e', child, dir], {
                stdio: ['ignore', 'ignore', 'pipe'],
              });
              let err = '';
              p.stderr.on('data', (d) => (err += d));
              p.on('exit', (code) => resolve(code === 0 ? '' : (err.split('\n').find((l) => l.includes('Error')) ?? `exit ${code}`)));
            }),
        ),
      );
      failures.push(...codes.filter(Boolean));
    }
    expect(failures).toEqual([]);
  });
});
