import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { startJob } from '../store/background.js';

// After a capture the sanitiser rebuilds the active cache (SPEC §4.2) in the background, at most once a
// minute (`knowledge.sanitizeEveryMs`); the run waits out the minute and builds again if captures came.

/** Start `cairn sanitize` detached unless one was started within the minute. Best effort. */
export function scheduleSanitize(store: Store): boolean {
  const stamp = {
    path: join(store.dir, 'cache', 'sanitize.requested'),
    everyMs: store.config.knowledge.sanitizeEveryMs,
  };
  return startJob(store, 'sanitize', stamp) !== undefined;
}
