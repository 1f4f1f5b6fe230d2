import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

// The health record (SPEC §2): fail-open errors are visible to auto-recall and `cairn doctor`.

export interface Health {
  degraded_since: string;
  last_error: string;
  last_error_at: string;
  errors: number;
}

/**
 * Record a fail-open error: a line in `cache/errors.log` and the health record that auto-recall and
 * `cairn doctor` read. Best effort: only into a store directory that exists, never throwing.
 */
export function recordFailure(storeDir: string | undefined, command: string, message: string, at = new Date()): void {
  if (!storeDir || !existsSync(storeDir)) return;
  try {
    const cache = join(storeDir, 'cache');
    mkdirSync(cache, { recursive: true });
    // never through a symlink planted in the store (SPEC §2)
    const fd = openSync(join(cache, 'errors.log'), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
    try {
      writeSync(fd, `${at.toISOString()} ${command}: ${message.replace(/\n/g, ' ')}\n`);
    } finally {
      closeSync(fd);
    }
    const health = readHealth(storeDir);
    const next: Health = {
      degraded_since: health?.degraded_since ?? at.toISOString(),
      last_error: `${command}: ${message}`,
      last_error_at: at.toISOString(),
      errors: (health?.errors ?? 0) + 1,
    };
    const tmp = `${healthPath(storeDir)}.${process.pid}.tmp`;
    rmSync(tmp, { force: true });
    writeFileSync(tmp, JSON.stringify(next) + '\n', { flag: 'wx' });
    renameSync(tmp, healthPath(storeDir));
  } catch {
    // the store itself is what is broken; stderr already carries the message
  }
}

function healthPath(storeDir: string): string {
  return join(storeDir, 'cache', 'health.json');
}

/** The health record, or undefined when nothing failed since it was last cleared. */
export function readHealth(storeDir: string): Health | undefined {
  try {
    return JSON.parse(readFileSync(healthPath(storeDir), 'utf8')) as Health;
  } catch {
    return undefined;
  }
}

/**
 * A run of `command` succeeded: if the last recorded error was that command's, the memory is healthy
 * again and the record goes (SPEC §2: "cleared once a later run succeeds"). Costs one stat when healthy.
 */
export function clearFailure(storeDir: string, command: string): void {
  if (!existsSync(healthPath(storeDir))) return;
  try {
    if (readHealth(storeDir)?.last_error.startsWith(`${command}: `)) rmSync(healthPath(storeDir), { force: true });
  } catch {
    // best effort, like recording
  }
}
