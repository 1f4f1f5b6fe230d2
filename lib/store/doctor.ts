import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Deadline } from '../core/deadline.js';
import { describeError } from '../core/errors.js';
import { loadConfig } from './config.js';
import { loadDriver, openDatabase, type Database } from './db.js';
import { followerStatus, type LogFollower } from './follower.js';
import { lastErrors, readHealth, type Check } from './health.js';
import { encoderFor } from './tokens.js';
import { projectIdStatus, type Location } from './root.js';

// `cairn doctor`, the store's side (SPEC §2): the modules load, the settings read, the database is
// sound, each log is applied to its index, and no fail-open error is waiting to be looked at.

/** better-sqlite3 and tiktoken (the encoding of config.json) load on this machine. */
export function moduleChecks(encoding: string): Check[] {
  const check = (name: string, load: () => void): Check => {
    try {
      load();
      return { name, status: 'ok', detail: 'loads' };
    } catch (err) {
      return { name, status: 'fail', detail: describeError(err) };
    }
  };
  return [check('better-sqlite3', () => new (loadDriver())(':memory:').close()), check('tiktoken', () => encoderFor(encoding))];
}

export function configCheck(dir: string): Check {
  if (!existsSync(join(dir, 'config.json'))) return { name: 'config.json', status: 'ok', detail: 'none (defaults)' };
  try {
    loadConfig(dir);
    return { name: 'config.json', status: 'ok', detail: 'reads' };
  } catch (err) {
    return { name: 'config.json', status: 'fail', detail: describeError(err) };
  }
}

/** Integrity of cache/state.db and how far each log is applied to it. The database is opened as is: never moved aside here. */
export function databaseChecks(dbPath: string, followers: LogFollower<unknown>[]): Check[] {
  if (!existsSync(dbPath)) return [{ name: 'database', status: 'ok', detail: 'not built yet (built from the logs on first use)' }];
  let db: Database;
  try {
    db = openDatabase(dbPath, { deadline: new Deadline(0), strict: true, warn: () => {}, within: dirname(dirname(dbPath)) });
  } catch (err) {
    return [{ name: 'database', status: 'fail', detail: `${describeError(err)} — delete it; it is rebuilt from the logs` }];
  }
  try {
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).filter((r) => r !== 'ok');
    const checks: Check[] = [
      problems.length === 0
        ? { name: 'database', status: 'ok', detail: `integrity ok (${Math.round(statSync(dbPath).size / 1024)} KiB)` }
        : { name: 'database', status: 'fail', detail: `integrity check: ${problems.slice(0, 3).join('; ')} — run cairn rebuild` },
    ];
    for (const f of followers) {
      const s = followerStatus(db, f);
      const name = `${f.name} index`;
      if (s.inSync) checks.push({ name, status: 'ok', detail: `in sync with ${f.path.split('/').slice(-2).join('/')} (${s.logBytes} bytes)` });
      else if (s.rebuilding) checks.push({ name, status: 'warn', detail: 'a rebuild is under way; the next command continues it' });
      else checks.push({ name, status: 'warn', detail: `${s.appliedBytes} of ${s.logBytes} bytes of the log applied (the next command catches up; cairn rebuild to force)` });
    }
    return checks;
  } catch (err) {
    return [{ name: 'database', status: 'fail', detail: `${describeError(err)} — delete it; it is rebuilt from the logs` }];
  } finally {
    db.close();
  }
}

/** Fail-open errors recorded since the last `cairn doctor --clear`. */
export function healthCheck(dir: string): Check {
  const health = readHealth(dir);
  if (!health) return { name: 'health', status: 'ok', detail: 'no errors recorded' };
  const last = lastErrors(dir, 3).map((l) => `\n    ${l}`).join('');
  return {
    name: 'health',
    status: 'fail',
    detail: `degraded since ${health.degraded_since}: ${health.errors} error(s), the last: ${health.last_error}${last} (fix it, then cairn doctor --clear)`,
  };
}

/** The recorded project id against the one this checkout derives (SPEC §1.2: reported, never silently followed). */
export function projectIdCheck(loc: Location): Check {
  const name = 'project id';
  if (loc.projectFrom === 'given') return { name, status: 'ok', detail: `${loc.project} (given by --project or $CAIRN_PROJECT)` };
  if (!loc.ownStore) return { name, status: 'ok', detail: `${loc.project} (derived: a store shared through --dir records none)` };
  const id = projectIdStatus(loc);
  if (id.recorded === null) return { name, status: 'warn', detail: `${id.derived} is derived, not recorded: run cairn init to record it, so memory survives moving the directory` };
  if (!id.mismatch) return { name, status: 'ok', detail: `${id.recorded} (recorded, and this checkout derives the same)` };
  return {
    name,
    status: 'warn',
    detail:
      `${id.recorded} is recorded in config.json, but this checkout derives ${id.derived} (the directory moved or the origin remote changed). ` +
      `The recorded id is used; if this store was copied from another project, set "project" in .cairn/config.json to ${id.derived}`,
  };
}
