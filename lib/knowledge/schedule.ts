import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { startJob } from '../store/background.js';

// After a capture the sanitiser rebuilds the active cache (SPEC §4.2): in the background, never
// waited for, and at most once a minute however many captures arrive (a stamp file's time says when
// it was last asked for; `knowledge.sanitizeEveryMs` in config.json). The run it starts waits out that
// minute and builds once more if captures came meanwhile, so the last of a burst is not left out of
// the cache.

/**
 * Start `cairn sanitize` for this store in a detached process, unless one was started within the minute. Best effort.
 */
export function scheduleSanitize(store: Store): boolean {
  const stamp = {
    path: join(store.dir, 'cache', 'sanitize.requested'),
    everyMs: store.config.knowledge.sanitizeEveryMs,
  };
  return startJob(store, 'sanitize', stamp) !== undefined;
}
