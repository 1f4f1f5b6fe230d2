import { existsSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Store } from './store.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';

// Work too long for a hook's deadline (the sanitiser after captures, the indexes a fresh clone's
// replay leaves, the runs writers kept for later) runs in a detached `cairn` process that outlives
// the hook, never waited for. child_process is loaded only then: most runs start nothing.

const require = createRequire(import.meta.url);

/**
 * The deadline of every job started here: none runs unbounded (a runaway input would otherwise pin a
 * CPU for minutes, unseen). Ten minutes: the sanitiser of a knowledge log of a million lines, far
 * past rotation, needs a few. A job that runs out of it fails open like any command — recorded for
 * `cairn doctor` and the session-start health line — and what it left is picked up by the next one.
 */
const BACKGROUND_DEADLINE_MS = 10 * 60_000;

/** The `cairn` entry beside the one running (bin/memory-capture.js → bin/cairn.js), if there is one. */
export function cairnEntry(): string | undefined {
  try {
    const cairn = join(dirname(realpathSync(process.argv[1])), 'cairn.js');
    return existsSync(cairn) ? cairn : undefined;
  } catch {
    return undefined;
  }
}

/** At most one start per `everyMs`, as the time of the file at `path` says. */
export interface Stamp {
  path: string;
  everyMs: number;
}

/**
 * Every job cairn starts in the background, by name: the command it runs, and for the jobs of
 * `cairn rebuild` the steps it takes (`--job <name>`, put last so that the command line still starts
 * `cairn rebuild --continue`). `cairn rebuild --continue` alone takes every step, in REBUILD_STEPS' order.
 */
export const BACKGROUND_JOBS = {
  /** Bring the pattern index up to date and build its indexes: what a fresh clone's hooks had no time for. */
  'finish-index': { args: ['rebuild', '--continue'], steps: ['catch-up', 'pack'] },
  /** Apply the runs writers kept for later (lib/store/deferred.ts), in order, on a current index. */
  'apply-kept': { args: ['rebuild', '--continue'], steps: ['catch-up', 'apply-kept'] },
  /** Pack the term index's long posting lists again, after a full rebuild emptied them. */
  'pack-postings': { args: ['rebuild', '--continue'], steps: ['pack'] },
  /** Rebuild the knowledge working set after captures (SPEC §4.2, lib/knowledge/schedule.ts). */
  sanitize: { args: ['sanitize', '--catch-up'], steps: [] },
} as const;

export type BackgroundJob = keyof typeof BACKGROUND_JOBS;
/** The steps of `cairn rebuild --continue`, in the order it takes them. */
export const REBUILD_STEPS = ['catch-up', 'apply-kept', 'pack'] as const;
export type RebuildStep = (typeof REBUILD_STEPS)[number];

/**
 * Start the job for this store in the background (unless `stamp` says one started within its
 * interval), with the deadline above. Best effort: the pid of the process started, or undefined.
 */
export function startJob(store: Store, job: BackgroundJob, stamp?: Stamp): number | undefined {
  const { args, steps } = BACKGROUND_JOBS[job];
  try {
    // file times are real times: compared with the real clock, not a pinned CAIRN_NOW
    if (stamp && existsSync(stamp.path) && Date.now() - statSync(stamp.path).mtimeMs < stamp.everyMs) return undefined;
    const cairn = cairnEntry();
    if (!cairn) return undefined;
    if (stamp) store.writeFile(stamp.path, '');
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    // not the hook's deadline (this work is here because it does not fit in one) but a bound of its own
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
