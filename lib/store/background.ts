import { existsSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Store } from './store.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';

// Work too long for a hook's deadline (the sanitiser after captures, the indexes a fresh clone's
// replay leaves) runs in a detached `cairn` process that outlives the hook, never waited for.
// child_process is loaded only then: most runs start nothing.

const require = createRequire(import.meta.url);


/** The `cairn` entry beside the one running (bin/memory-capture.js → bin/cairn.js), if there is one. */
export function cairnEntry(): string | undefined {
  try {
    const cairn = join(dirname(realpathSync(process.argv[1])), 'cairn.js');
    return existsSync(cairn) ? cairn : undefined;
  } catch {
    return undefined;
  }
}

/** Start `cairn <args>` for this store in the background, unless `stamp` says it was within `everyMs`. Best effort: whether it started. */
export function startInBackground(store: Store, args: string[], stamp: string, everyMs: number): boolean {
  try {
    // file times are real times: compared with the real clock, not a pinned CAIRN_NOW
    if (existsSync(stamp) && Date.now() - statSync(stamp).mtimeMs < everyMs) return false;
    const cairn = cairnEntry();
    if (!cairn) return false;
    store.writeFile(stamp, '');
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    // without the hook's deadline: this work is here because it does not fit in one
    const { CAIRN_DEADLINE_MS: _hooks, [DEFERRED_ENV]: _kept, ...env } = process.env;
    const argv = [cairn, ...args, '--quiet', '--root', store.location.root, '--dir', store.dir, '--project', store.project];
    spawn(process.execPath, argv, { detached: true, stdio: 'ignore', env }).unref();
    return true;
  } catch (err) {
    store.log.warn(`could not start cairn ${args[0]} in the background (${(err as Error).message})`);
    return false;
  }
}

