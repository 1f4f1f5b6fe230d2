import { closeSync, constants, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic.js';
import { readSmallFile } from '../io/read.js';
import { mkdirNoFollow } from '../io/safe.js';

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
    mkdirNoFollow(storeDir, cache);
    // never through a symlink planted in the store (SPEC §2)
    const fd = openSync(join(cache, 'errors.log'), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
    try {
      writeSync(fd, `${at.toISOString()} ${command}: ${message.replace(/\n/g, ' ')}\n`);
    } finally {
      closeSync(fd);
    }
    const healthPath = join(cache, 'health.json');
    let health: Health | undefined;
    try {
      health = JSON.parse(readSmallFile(healthPath, 64 * 1024)?.toString('utf8') ?? '') as Health;
    } catch {
      health = undefined;
    }
    const next: Health = {
      degraded_since: health?.degraded_since ?? at.toISOString(),
      last_error: `${command}: ${message}`,
      last_error_at: at.toISOString(),
      errors: (health?.errors ?? 0) + 1,
    };
    writeFileAtomic(healthPath, JSON.stringify(next) + '\n', storeDir);
  } catch {
    // the store itself is what is broken; stderr already carries the message
  }
}
