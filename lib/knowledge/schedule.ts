import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { startJob } from '../store/background.js';

// At most once a minute (SPEC §4.2); the run waits out the minute and builds again if captures came.

/** Best effort. */
export function scheduleSanitize(store: Store): boolean {
  const stamp = {
    path: join(store.dir, 'cache', 'sanitize.requested'),
    everyMs: store.config.knowledge.sanitizeEveryMs,
  };
  return startJob(store, 'sanitize', stamp) !== undefined;
}
