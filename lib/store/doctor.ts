import { existsSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Deadline } from '../core/deadline.js';
import { describeError, IndexCatchingUp } from '../core/errors.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { nearest } from '../core/suggest.js';
import { configuredRoles, readConfigFile, type Config, type ConfigProblem } from './config.js';
import { EVENT_LOG_INDEXES, loadDriver, openDatabase, type Database } from './db.js';
import { followerStatus, type LogFollower } from './follower.js';
import { lastErrors, readHealth, type Check } from './health.js';
import { encoderFor } from './tokens.js';
import { projectIdStatus, type Location } from './root.js';
import { applier, deferredCount, KEPT_RUN_MS, oldestDeferred, START_GRACE_MS, tooLongDeferred, unreadableDeferred } from './deferred.js';
import { parseJsonLine, readBytes } from '../io/jsonl.js';
import { indexWritable, type Store } from './store.js';

// `cairn doctor`, the store's side (SPEC §2). Over 400 lines: one small check a function, sharing every helper.

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
  let parsed: ReturnType<typeof readConfigFile>;
  try {
    parsed = readConfigFile(dir);
  } catch (err) {
    return { name: 'config.json', status: 'fail', detail: describeError(err) };
  }
  if (parsed === undefined) return { name: 'config.json', status: 'ok', detail: 'none (defaults)' };
  if (parsed.problems.length === 0) return { name: 'config.json', status: 'ok', detail: 'reads' };
  return {
    name: 'config.json',
    status: 'warn',
    detail: `${parsed.problems.map(phrase).join('; ')}: the default is used instead (README: config.json)`,
  };
}

function phrase(problem: ConfigProblem): string {
  const guess = problem.known && nearest(problem.setting.slice(problem.prefix.length), problem.known);
  return guess ? `${problem.text} (did you mean "${problem.prefix}${guess}"?)` : problem.text;
}

function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFile()) return 'a file';
  if (stats.isFIFO()) return 'a FIFO';
  return stats.isSocket() ? 'a socket' : 'a device';
}

const RESTORE = (path: string) => `move it away, then restore the log from git (git checkout -- .cairn/${path})`;

/** Never a link (SPEC §2); every command fails open on them, so only doctor says it. */
const STORE_ENTRIES: { path: string; kind: 'directory' | 'file'; remedy: string }[] = [
  {
    path: 'cache',
    kind: 'directory',
    remedy: 'remove it: it holds only what cairn derives from the logs, and the next command makes it again',
  },
  { path: 'memory', kind: 'directory', remedy: 'move it away: it holds the knowledge log' },
  { path: 'artifacts', kind: 'directory', remedy: 'move it away: it holds the deliberation texts' },
  { path: 'events.jsonl', kind: 'file', remedy: RESTORE('events.jsonl') },
  { path: 'memory/knowledge.jsonl', kind: 'file', remedy: RESTORE('memory/knowledge.jsonl') },
  { path: 'memory/knowledge.archive.jsonl', kind: 'file', remedy: RESTORE('memory/knowledge.archive.jsonl') },
];

const LOCKED = ['events.jsonl', 'memory/knowledge.jsonl', 'memory/knowledge.archive.jsonl', 'landing-patterns.json'];
const LOCKS = LOCKED.map((log) => `${log}.lock`);

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null; // missing, or unreachable: the entry above it is reported
  }
}

export function storeLayoutChecks(dir: string): Check[] {
  const checks: Check[] = [];
  for (const entry of STORE_ENTRIES) {
    const stats = lstatOrNull(join(dir, entry.path));
    const ok = stats === null || (entry.kind === 'directory' ? stats.isDirectory() : stats.isFile());
    if (ok) continue;
    const detail = `${entry.path} is ${kindOf(stats!)}, not a ${entry.kind}: ${entry.remedy}`;
    checks.push({ name: entry.path, status: 'fail', detail });
  }
  for (const lock of LOCKS) {
    const stats = lstatOrNull(join(dir, lock));
    if (stats === null || stats.isFile()) continue; // the next writer holds or breaks it
    if (stats.isDirectory() && readdirSync(join(dir, lock)).length > 0) {
      const what = 'every writer waits for it until its deadline and gives up — remove it while no cairn runs';
      checks.push({ name: lock, status: 'fail', detail: `${lock} is a directory that is not empty: ${what}` });
    } else {
      const what = 'writers wait for it until the next one removes it, five minutes after it appeared';
      checks.push({ name: lock, status: 'warn', detail: `${lock} is ${kindOf(stats)}: ${what}` });
    }
  }
  const cache = lstatOrNull(join(dir, 'cache'));
  if ((cache === null || cache.isDirectory()) && !indexWritable(join(dir, 'cache', 'state.db'), dir)) {
    const why = 'every command builds the index in memory from the logs again, and state.db never catches up';
    const detail = `cache/ cannot be written by this user: ${why} — make .cairn/cache writable for this user`;
    checks.push({ name: 'cache', status: 'fail', detail });
  }
  return checks;
}

export interface FollowedLog {
  follower: LogFollower<unknown>;
  /** An index behind its log is normal after a capture or a pull. */
  catchUp: string;
}

/** Opened as is, never moved aside. */
export function databaseChecks(dbPath: string, logs: FollowedLog[]): Check[] {
  if (!existsSync(dbPath)) return [{ name: 'database', status: 'ok', detail: 'not built yet (built from the logs on first use)' }];
  let db: Database;
  try {
    // a person's check: a held database is named at once, not waited for
    db = openDatabase(dbPath, {
      deadline: new Deadline(0, undefined, true),
      strict: true,
      warn: () => {},
      within: dirname(dirname(dbPath)),
    });
  } catch (err) {
    if (err instanceof IndexCatchingUp)
      return [{ name: 'database', status: 'warn', detail: `${describeError(err)}: checked again once it lets go` }];
    return [
      {
        name: 'database',
        status: 'fail',
        detail: `${describeError(err)} — cairn rebuild moves it aside and rebuilds it from the logs`,
      },
    ];
  }
  try {
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .filter((r) => r !== 'ok');
    const checks: Check[] = [
      problems.length === 0
        ? { name: 'database', status: 'ok', detail: `integrity ok (${Math.round(statSync(dbPath).size / 1024)} KiB)` }
        : {
            name: 'database',
            status: 'fail',
            detail:
              `integrity check: ${problems.slice(0, 3).join('; ')} — delete it (it is only an index): the next ` +
              `command rebuilds it from the logs`,
          },
    ];
    for (const { follower: f, catchUp } of logs) {
      const s = followerStatus(db, f);
      const name = `${f.name} index`;
      const log = relative(dirname(dirname(dbPath)), f.path);
      if (s.inSync) checks.push({ name, status: 'ok', detail: `in sync with ${log} (${s.logBytes} bytes)` });
      else if (s.rebuilding)
        checks.push({
          name,
          status: 'warn',
          detail: 'a rebuild is under way; the next command continues it (or run cairn rebuild --continue)',
        });
      else
        checks.push({
          name,
          status: 'ok',
          detail: `${s.appliedBytes} of ${s.logBytes} bytes of ${log} applied so far: ${catchUp}`,
        });
    }
    // a readers' index missing with no build under way makes every lookup read a whole table
    const events = logs.find((l) => l.follower.name === 'events');
    if (events && !followerStatus(db, events.follower).rebuilding) {
      const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?");
      const missing = Object.keys(EVENT_LOG_INDEXES).filter((name) => exists.get(name) === undefined);
      if (missing.length)
        checks.push({
          name: 'events index',
          status: 'fail',
          detail: `missing ${missing.join(', ')} — cairn rebuild builds them`,
        });
    }
    return checks;
  } catch (err) {
    return [
      {
        name: 'database',
        status: 'fail',
        detail: `${describeError(err)} — delete it (it is only an index): the next command rebuilds it from the logs`,
      },
    ];
  } finally {
    db.close();
  }
}

/** A kept run waiting unapplied, or set aside, is memory not yet recorded: failing. */
export function deferredCheck(dir: string): Check {
  const name = 'deferred writes';
  const tooLong = tooLongDeferred(dir);
  if (tooLong.length) {
    const which = `cache/deferred/${tooLong[0]}${tooLong.length > 1 ? ', …' : ''}`;
    return {
      name,
      status: 'fail',
      detail:
        `${tooLong.length} kept run(s) took longer than the ${KEPT_RUN_MS / 1000} s a background job gives one ` +
        `and were set aside (${which}): run cairn rebuild --continue at a terminal (no bound there), or delete them`,
    };
  }
  const unreadable = unreadableDeferred(dir);
  if (unreadable.length) {
    return {
      name,
      status: 'warn',
      detail:
        `${unreadable.length} kept run(s) could not be read and were set aside, never applied: ` +
        `cache/deferred/${unreadable[0]}${unreadable.length > 1 ? ', …' : ''} (delete them once looked at)`,
    };
  }
  const count = deferredCount(dir);
  const oldest = oldestDeferred(dir);
  if (count === 0 || oldest === undefined) return { name, status: 'ok', detail: 'none waiting' };
  const since = new Date(oldest).toISOString();
  const holder = applier(dir);
  if (holder)
    return {
      name,
      status: 'ok',
      detail: `${count} waiting since ${since}: a background cairn rebuild --continue applies them`,
    };
  // real times: compared with the real clock, not a pinned CAIRN_NOW
  if (Date.now() - oldest < START_GRACE_MS)
    return {
      name,
      status: 'ok',
      detail: `${count} waiting since ${since}: a background cairn rebuild --continue is starting for them`,
    };
  return {
    name,
    status: 'fail',
    detail:
      `${count} waiting since ${since} and nothing is applying them: run cairn rebuild --continue (cairn ` +
      `doctor's health check shows why the last one stopped, if it did)`,
  };
}

/** The cron line that runs `cairn maintain` is this machine's. */
export const MAINTAINED_STAMP = 'maintained';
export function recordMaintained(store: Store): void {
  try {
    store.writeFile(join(store.dir, 'cache', MAINTAINED_STAMP), '');
  } catch {
    // not writable: nothing to record
  }
}

const MAINTAIN_EVERY_MS = 36 * 3_600_000;

/** Without it nothing fails, but blocks get worse; a log younger than a night has missed none. */
export function maintenanceCheck(dir: string, eventsPath: string): Check {
  const name = 'maintenance';
  const cron = 'add the nightly cron line that cairn init prints (hooks/cron.txt)';
  let ranAt: number | undefined;
  try {
    ranAt = statSync(join(dir, 'cache', MAINTAINED_STAMP)).mtimeMs;
  } catch {
    ranAt = undefined;
  }
  // real times: compared with the real clock, not a pinned CAIRN_NOW
  if (ranAt !== undefined) {
    const when = `cairn maintain last ran ${new Date(ranAt).toISOString()}`;
    return Date.now() - ranAt <= MAINTAIN_EVERY_MS
      ? { name, status: 'ok', detail: when }
      : { name, status: 'warn', detail: `${when}, not nightly: ${cron}` };
  }
  const since = firstEventTime(eventsPath);
  if (!Number.isFinite(since) || Date.now() - since <= MAINTAIN_EVERY_MS)
    return { name, status: 'ok', detail: `cairn maintain has not run on this machine yet (${cron})` };
  const days = Math.floor((Date.now() - since) / 86_400_000);
  return {
    name,
    status: 'warn',
    detail: `cairn maintain has never run on this machine, and the pattern log goes back ${days} day(s): ${cron}`,
  };
}

function firstEventTime(eventsPath: string): number {
  try {
    const first = parseJsonLine<{ ts?: unknown }>(readBytes(eventsPath, 0, 4096).toString('utf8').split('\n')[0]);
    return first.ok ? Date.parse(String(first.value.ts)) : NaN;
  } catch {
    return NaN;
  }
}

/** Likely misspellings of another role; a run warns only until the role stores. */
export function roleCheck(config: Config, readStored: () => string[]): Check {
  const configured = configuredRoles(config);
  let stored: string[];
  try {
    stored = readStored();
  } catch (err) {
    return { name: 'roles', status: 'warn', detail: `not read: ${describeError(err)}` };
  }
  const suspects = stored
    .filter((role) => !configured.includes(role))
    .map((role) => ({
      role,
      like: nearest(
        role,
        [...new Set([...configured, ...stored])].filter((r) => r !== role),
      ),
    }))
    .filter((s): s is { role: string; like: string } => s.like !== undefined);
  // a role is whatever a log line says: one line, sanitised (SPEC §4.6)
  const shown = (role: string) => sanitizeUntrusted(role, { singleLine: true });
  if (suspects.length === 0)
    return {
      name: 'roles',
      status: 'ok',
      detail: stored.length > 0 ? [...stored].sort().map(shown).join(', ') : 'none stored yet',
    };
  const named = suspects.map((s) => `'${shown(s.role)}' looks like a misspelling of '${shown(s.like)}'`).join('; ');
  return {
    name: 'roles',
    status: 'warn',
    detail: `${named}: fix the pipeline's --role (a role of its own: name it in config.json roles)`,
  };
}

export function healthCheck(dir: string): Check {
  const health = readHealth(dir);
  if (!health) return { name: 'health', status: 'ok', detail: 'no errors recorded' };
  // recorded messages may quote what a command read
  const shown = (text: string) => sanitizeUntrusted(text, { singleLine: true });
  const last = lastErrors(dir, 3)
    .map((l) => `\n    ${shown(l)}`)
    .join('');
  return {
    name: 'health',
    status: 'fail',
    detail:
      `degraded since ${health.degraded_since}: ${health.errors} error(s), the last: ` +
      `${shown(health.last_error)}${last} (fix it, then cairn doctor --clear)`,
  };
}

export function projectIdCheck(loc: Location): Check {
  const name = 'project id';
  if (loc.projectFrom === 'given') return { name, status: 'ok', detail: `${loc.project} (given by --project or $CAIRN_PROJECT)` };
  if (!loc.ownStore) return { name, status: 'ok', detail: `${loc.project} (derived: a store shared through --dir records none)` };
  if (loc.projectFrom === 'unreadable') {
    return {
      name,
      status: 'fail',
      detail:
        'config.json does not read and no project id can be read from it: every command refuses this store until config.json is fixed',
    };
  }
  const id = projectIdStatus(loc);
  if (id.recorded !== null && configCheck(loc.dir).status === 'fail') {
    return {
      name,
      status: 'warn',
      detail: `${id.recorded} (recorded; config.json does not read, but its "project" was still found and is used — fix config.json)`,
    };
  }
  if (id.recorded === null)
    return {
      name,
      status: 'warn',
      detail: `${id.derived} is derived, not recorded: run cairn init to record it, so memory survives moving the directory`,
    };
  if (!id.mismatch) return { name, status: 'ok', detail: `${id.recorded} (recorded, and this checkout derives the same)` };
  return {
    name,
    status: 'warn',
    detail:
      `${id.recorded} is recorded in config.json, but this checkout derives ${id.derived} (the directory moved or the ` +
      `origin remote changed). ` +
      `The recorded id is used; if this store was copied from another project, set "project" in .cairn/config.json to ${id.derived}`,
  };
}
