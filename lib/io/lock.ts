import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { hostname } from 'node:os';
import { CairnError } from '../core/errors.js';
import { sleepSync, type Deadline } from '../core/deadline.js';
import { readSmallFile } from './read.js';

// `<file>.lock` made with O_EXCL, holding "pid host time"; broken when its holder died on this host or after STALE_MS.
// Anything else there is waited for, never followed, removed only when stale and harmless.
const STALE_MS = 5 * 60_000;
/** Lost its holder between create and write. */
const TORN_MS = 1000;

export interface Lock {
  release(): void;
}

interface Found {
  stats: Stats;
  holder: string;
  stale: boolean;
  /** An empty lock's: worth waiting for. */
  staleAt?: number;
}

export function acquireLock(target: string, deadline: Deadline): Lock {
  const path = `${target}.lock`;
  const token = `${process.pid} ${hostname()} ${Date.now()}\n`;
  const started = Date.now();
  const giveUpAt = started + deadline.waitLimit();
  let pause = 2;
  for (;;) {
    const lock = create(path, token);
    if (lock) return lock;
    const found = inspect(path);
    const broken = found === undefined || (found.stale && breakStale(path, found));
    // every round: nothing at the path keeps a writer past its deadline
    const until = found?.staleAt === undefined ? giveUpAt : Math.max(giveUpAt, Math.min(found.staleAt + 10, deadline.at));
    if (Date.now() >= until) {
      const last = broken ? create(path, token) : undefined; // broken just now: one last try
      if (last) return last;
      throw new CairnError('lock', `lock ${path} ${found?.holder ?? 'kept changing hands'}; gave up after ${Date.now() - started} ms`);
    }
    sleepSync(broken ? 1 : Math.min(pause, Math.max(1, until - Date.now())));
    pause = Math.min(pause * 2, 25);
  }
}

/** Never waits. */
export function tryLock(target: string): Lock | undefined {
  const path = `${target}.lock`;
  const token = `${process.pid} ${hostname()} ${Date.now()}\n`;
  const lock = create(path, token);
  if (lock) return lock;
  const found = inspect(path);
  const broken = found === undefined || (found.stale && breakStale(path, found));
  return broken ? create(path, token) : undefined;
}

export function lockHolder(target: string): string | undefined {
  const found = inspect(`${target}.lock`);
  return found === undefined || found.stale ? undefined : found.holder;
}

function create(path: string, token: string): Lock | undefined {
  try {
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      writeSync(fd, token);
    } finally {
      closeSync(fd);
    }
    return { release: () => releaseLock(path, token) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new CairnError('store', `cannot create lock ${path}: ${(err as Error).message}`);
  }
}

function releaseLock(path: string, token: string): void {
  try {
    if (readSmallFile(path, 1024, true)?.toString('utf8') === token) unlinkSync(path);
  } catch {
    // gone, or no longer ours
  }
}

function inspect(path: string): Found | undefined {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return undefined;
  }
  const age = Date.now() - stats.mtimeMs;
  if (stats.isSymbolicLink()) {
    return {
      stats,
      holder: 'is a symbolic link, not a cairn lock (remove it if no process uses it)',
      stale: age > STALE_MS,
    };
  }
  if (stats.isDirectory()) {
    let empty = false;
    try {
      empty = readdirSync(path).length === 0;
    } catch {
      empty = false;
    }
    const holder = `is a directory, not a cairn lock (a \`mkdir\` lock?${empty ? '' : ' it is not empty and is never removed'})`;
    return { stats, holder, stale: empty && age > STALE_MS };
  }
  if (!stats.isFile()) return { stats, holder: 'is not a regular file, not a cairn lock', stale: false };
  let content = '';
  try {
    content = readSmallFile(path, 1024, true)?.toString('utf8') ?? '';
  } catch {
    content = '';
  }
  const token = /^(\d+) (\S+) (\d+)\n?$/.exec(content);
  if (!token) {
    const shown = JSON.stringify(content.slice(0, 40));
    if (content === '')
      return {
        stats,
        holder: 'is empty (its holder died while taking it?)',
        stale: age > TORN_MS,
        staleAt: stats.mtimeMs + TORN_MS,
      };
    return { stats, holder: `holds ${shown}, not a cairn lock`, stale: age > STALE_MS };
  }
  const [, pidText, host, timeText] = token;
  const pid = Number(pidText);
  const deadHolder = host === hostname() && pid > 0 && !isAlive(pid);
  const holder = `is held by another process (pid ${pid} on ${host})`;
  return { stats, holder, stale: deadHolder || Date.now() - Number(timeText) > STALE_MS };
}

/** Renamed aside first: two breakers cannot both win, and a fresh lock moved by mistake goes back. */
function breakStale(path: string, found: Found): boolean {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return false;
  }
  let moved: Stats | undefined;
  try {
    moved = lstatSync(aside);
  } catch {
    moved = undefined;
  }
  if (moved && moved.ino !== found.stats.ino) {
    restore(aside, path, moved);
    return false;
  }
  try {
    if (moved?.isDirectory()) rmdirSync(aside);
    else unlinkSync(aside);
  } catch {
    if (moved) restore(aside, path, moved); // filled meanwhile: someone's
    return false;
  }
  return true;
}

function restore(aside: string, path: string, stats: Stats): void {
  if (stats.isDirectory()) {
    try {
      renameSync(aside, path);
    } catch {
      // taken again: it stays aside
    }
    return;
  }
  try {
    linkSync(aside, path); // only if still free
  } catch {
    // theirs stands
  }
  try {
    unlinkSync(aside);
  } catch {
    // best effort
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
