import { existsSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Store } from '../store/store.js';

// After a capture the sanitiser rebuilds the active cache (SPEC §4.2): in the background, never
// waited for, and at most once a minute however many captures arrive (a stamp file's time says when
// it was last asked for; `knowledge.sanitizeEveryMs` in config.json). The run it starts waits out that
// minute and builds once more if captures came meanwhile, so the last of a burst is not left out of
// the cache. child_process is loaded only then: most captures spawn nothing.

const require = createRequire(import.meta.url);

/** Start `cairn sanitize` for this store in a detached process, unless one was started within the minute. Best effort. */
export function scheduleSanitize(store: Store): boolean {
  const stamp = join(store.dir, 'cache', 'sanitize.requested');
  try {
    // file times are real times: compared with the real clock, not a pinned CAIRN_NOW
    if (existsSync(stamp) && Date.now() - statSync(stamp).mtimeMs < store.config.knowledge.sanitizeEveryMs) return false;
    // the `cairn` entry beside the one running (bin/memory-capture.js → bin/cairn.js)
    const cairn = join(dirname(realpathSync(process.argv[1])), 'cairn.js');
    if (!existsSync(cairn)) return false;
    store.writeFile(stamp, '');
    const args = [cairn, 'sanitize', '--quiet', '--catch-up', '--root', store.location.root, '--dir', store.dir, '--project', store.project];
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    spawn(process.execPath, args, { detached: true, stdio: 'ignore' }).unref();
    return true;
  } catch (err) {
    store.log.warn(`could not start the sanitiser in the background (${(err as Error).message})`);
    return false;
  }
}
