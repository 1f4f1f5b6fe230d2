import { closeSync, constants, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic.js';
import { readFileTail, readSmallFile } from '../io/read.js';
import { mkdirNoFollow } from '../io/safe.js';

// Fail-open errors shown by auto-recall and doctor (SPEC §2).

export interface Health {
  degraded_since: string;
  last_error: string;
  last_error_at: string;
  errors: number;
  /** Repaired where it happened (a damaged index rebuilt): doctor shows it, sessions are not told. */
  last_repaired?: true;
}

/** Never throws. */
export function recordFailure(
  storeDir: string | undefined,
  command: string,
  message: string,
  at = new Date(),
  opts: { repaired?: boolean } = {},
): void {
  if (!storeDir || !existsSync(storeDir)) return;
  try {
    const cache = join(storeDir, 'cache');
    mkdirNoFollow(storeDir, cache);
    // never through a planted link (SPEC §2)
    const fd = openSync(
      join(cache, 'errors.log'),
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o644,
    );
    try {
      writeSync(fd, `${at.toISOString()} ${command}: ${message.replace(/\n/g, ' ')}\n`);
    } finally {
      closeSync(fd);
    }
    const healthPath = join(cache, 'health.json');
    const health = readHealth(storeDir);
    const next: Health = {
      degraded_since: health?.degraded_since ?? at.toISOString(),
      last_error: `${command}: ${message}`,
      last_error_at: at.toISOString(),
      errors: (health?.errors ?? 0) + 1,
      ...(opts.repaired ? { last_repaired: true as const } : {}),
    };
    writeFileAtomic(healthPath, JSON.stringify(next) + '\n', storeDir);
  } catch {
    // the store itself is broken; stderr already carries the message
  }
}

/** `fail` makes doctor exit 1; `warn` heals by itself or needs a look. */
export interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'off';
  detail: string;
}

const HEALTH_CAP = 64 * 1024;

export function readHealth(storeDir: string): Health | null {
  try {
    return JSON.parse(readSmallFile(join(storeDir, 'cache', 'health.json'), HEALTH_CAP)?.toString('utf8') ?? 'null') as Health | null;
  } catch {
    return null;
  }
}

export function clearHealth(storeDir: string): void {
  rmSync(join(storeDir, 'cache', 'health.json'), { force: true });
}

const ERRORS_TAIL = 64 * 1024;

export function lastErrors(storeDir: string, n: number): string[] {
  try {
    // the tail's first line may be cut
    const tail = readFileTail(join(storeDir, 'cache', 'errors.log'), ERRORS_TAIL);
    if (!tail) return [];
    const text = tail.toString('utf8');
    return (tail.length < ERRORS_TAIL ? text : text.slice(text.indexOf('\n') + 1)).trimEnd().split('\n').filter(Boolean).slice(-n);
  } catch {
    return [];
  }
}

/** SPEC §2; one stat when healthy. */
export function clearFailure(storeDir: string, command: string): void {
  if (!existsSync(join(storeDir, 'cache', 'health.json'))) return;
  if (readHealth(storeDir)?.last_error.startsWith(`${command}: `)) clearHealth(storeDir);
}
