import { closeSync, constants, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { CairnError } from '../core/errors.js';
import { sleepSync, type Deadline } from '../core/deadline.js';

// Advisory lock: a `<file>.lock` created with O_EXCL holding "pid host time". A lock whose holder
// died on this host, or that is older than STALE_MS, is broken; a live holder is waited for until
// the deadline, then the caller fails open.
const STALE_MS = 5 * 60_000;

export interface Lock {
  release(): void;
}

export function acquireLock(target: string, deadline: Deadline, maxWaitMs = 10_000): Lock {
  const path = `${target}.lock`;
  const token = `${process.pid} ${hostname()} ${Date.now()}\n`;
  const giveUpAt = Math.min(deadline.at, Date.now() + maxWaitMs);
  let pause = 2;
  for (;;) {
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      return { release: () => releaseLock(path, token) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new CairnError('store', `cannot create lock ${path}: ${(err as Error).message}`);
      }
    }
    if (breakIfStale(path)) continue;
    if (Date.now() >= giveUpAt) {
      throw new CairnError('lock', `lock ${path} is held by another process (${holderOf(path)}); gave up`);
    }
    sleepSync(Math.min(pause, Math.max(1, giveUpAt - Date.now())));
    pause = Math.min(pause * 2, 25);
  }
}

function releaseLock(path: string, token: string): void {
  try {
    if (readFileSync(path, 'utf8') === token) unlinkSync(path);
  } catch {
    // already gone: nothing to release
  }
}

function holderOf(path: string): string {
  try {
    const [pid, host] = readFileSync(path, 'utf8').trim().split(' ');
    return `pid ${pid} on ${host}`;
  } catch {
    return 'unknown holder';
  }
}

/** Remove a lock whose holder is gone. Renaming first means two breakers cannot both succeed. */
function breakIfStale(path: string): boolean {
  let content: string;
  let mtime: number;
  try {
    content = readFileSync(path, 'utf8');
    mtime = statSync(path).mtimeMs;
  } catch {
    return true; // vanished meanwhile: try again at once
  }
  const [pidText, host, timeText] = content.trim().split(' ');
  const pid = Number(pidText);
  const since = Number(timeText) || mtime;
  const deadHolder = host === hostname() && Number.isInteger(pid) && pid > 0 && !isAlive(pid);
  // An empty file is a holder that died between create and write.
  const torn = content === '' && Date.now() - mtime > 1000;
  if (!deadHolder && !torn && Date.now() - since < STALE_MS) return false;
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return true;
  }
  let moved = '';
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    // unreadable: treat as the stale one
  }
  if (moved !== content) {
    // We moved a fresh lock taken after our check: put it back if the place is still free.
    try {
      linkSync(aside, path);
    } catch {
      // someone else holds it now; theirs stands
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // best effort
  }
  return true;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
