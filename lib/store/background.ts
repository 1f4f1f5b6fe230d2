import { existsSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Store } from './store.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';

// Work too long for a hook runs in a detached `cairn`, never waited for; child_process loads only then.

const require = createRequire(import.meta.url);

/** No job runs unbounded: a runaway input would pin a CPU unseen. */
const BACKGROUND_DEADLINE_MS = 10 * 60_000;

export function cairnEntry(): string | undefined {
  try {
    const cairn = join(dirname(realpathSync(process.argv[1])), 'cairn.js');
    return existsSync(cairn) ? cairn : undefined;
  } catch {
    return undefined;
  }
}

export interface Stamp {
  path: string;
  everyMs: number;
}

/** Its command and, for `cairn rebuild`'s, its steps (`--job`, put last). */
export const BACKGROUND_JOBS = {
  /** What a fresh clone's hooks had no time for. */
  'finish-index': { args: ['rebuild', '--continue'], steps: ['catch-up', 'pack'] },
  'apply-kept': { args: ['rebuild', '--continue'], steps: ['catch-up', 'apply-kept'] },
  'pack-postings': { args: ['rebuild', '--continue'], steps: ['pack'] },
  sanitize: { args: ['sanitize', '--catch-up'], steps: [] },
} as const;

export type BackgroundJob = keyof typeof BACKGROUND_JOBS;
export const REBUILD_STEPS = ['catch-up', 'apply-kept', 'pack'] as const;
export type RebuildStep = (typeof REBUILD_STEPS)[number];

/** Best effort. */
export function startJob(store: Store, job: BackgroundJob, stamp?: Stamp): number | undefined {
  const { args, steps } = BACKGROUND_JOBS[job];
  try {
    // file times are real: compared with the real clock, not a pinned CAIRN_NOW
    if (stamp && existsSync(stamp.path) && Date.now() - statSync(stamp.path).mtimeMs < stamp.everyMs) return undefined;
    const cairn = cairnEntry();
    if (!cairn) return undefined;
    if (stamp) store.writeFile(stamp.path, '');
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    // a bound of its own, not the hook's deadline
    const { [DEFERRED_ENV]: _kept, ...inherited } = process.env;
    const env = { ...inherited, CAIRN_DEADLINE_MS: String(BACKGROUND_DEADLINE_MS) };
    const where = ['--quiet', '--root', store.location.root, '--dir', store.dir, '--project', store.project];
    const argv = [cairn, ...args, ...where, ...(steps.length ? ['--job', job] : [])];
    const child = spawn(process.execPath, argv, { detached: true, stdio: 'ignore', env });
    child.unref();
    return child.pid;
  } catch (err) {
    store.log.warn(`could not start the background job ${job} (${(err as Error).message})`);
    return undefined;
  }
}
