import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CairnError, describeError } from '../core/errors.js';
import { randomBytes } from '../core/crypto.js';
import { cairnEntry, startInBackground } from './background.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';
import type { Store } from './store.js';

// Writers' runs kept for later (SPEC §2: never lose a line of memory). A pattern-loop writer
// decides on the current state — a deliberation's near-duplicates and links, a verdict's findings — so
// while the index is behind its log (a fresh clone's first runs at 100k patterns replay it a slice at
// a time), or a lock is held past the deadline, it cannot finish in time; failing open there would
// drop the deliberation or the verdict. Instead the run is kept as a request (its arguments and the
// texts it read) in cache/deferred/, and `cairn rebuild --continue`, started in the background, runs
// the requests in the order they came, without a deadline, once the index is current. A writer that
// finds requests waiting queues behind them, so a pipeline's steps apply in their order (the stores
// before the feedback that reads them). memory-capture keeps a capture that met a held lock the same
// way (captures need no order: a duplicate is never appended twice).

/** A writer's run, kept to be run again: its command, arguments, working directory and the texts it read (stdin, `--*-file`). */
export interface DeferredRequest {
  command: string;
  argv: string[];
  cwd: string;
  inputs: Record<string, string>;
}

/** The exit code of a replayed run that met a passing failure again (EX_TEMPFAIL): its request waits for the next run. */
export const DEFERRED_AGAIN = 75;
/** A request taken by a run that died is offered again after this long (the writers are idempotent per issue/run: SPEC §3.9.4). */
export const STALE_TAKEN_MS = 10 * 60_000;
/**
 * A deferring writer starts the background run unless one was started this recently: that one runs
 * every request kept while it lives (it takes them one at a time until none is left), and two would
 * replay a large log side by side. One started longer ago has finished, or died.
 */
const DRAIN_RETRY_MS = 60_000;

const WAITING = '.json';
const TAKEN = '.taken';
const UNREADABLE = '.unreadable';

export const deferredDir = (storeDir: string) => join(storeDir, 'cache', 'deferred');

const names = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return []; // no directory: nothing ever deferred
  }
};

const pending = (storeDir: string) => names(deferredDir(storeDir)).filter((n) => n.endsWith(WAITING) || n.endsWith(TAKEN));

/** How many requests wait or are being run (one directory read; none when nothing was ever deferred). */
export function deferredCount(storeDir: string): number {
  return pending(storeDir).length;
}

/** Requests set aside because they could not be read (never run: for a person to look at). */
export function unreadableDeferred(storeDir: string): string[] {
  return names(deferredDir(storeDir)).filter((n) => n.endsWith(UNREADABLE));
}

/** When the oldest request still waiting was kept (its name starts with the time), or undefined when none waits. */
export function oldestDeferred(storeDir: string): number | undefined {
  const oldest = pending(storeDir).sort()[0];
  return oldest === undefined ? undefined : Number(oldest.slice(0, 15));
}

/** Keep a request, named so that names sort in the order they came; start the background run that applies it. Returns its file name. */
export function deferRequest(store: Store, request: DeferredRequest): string {
  const name = `${String(Date.now()).padStart(15, '0')}-${randomBytes(4).toString('hex')}${WAITING}`;
  store.writeFile(join(deferredDir(store.dir), name), JSON.stringify(request));
  startInBackground(store, ['rebuild', '--continue'], join(store.dir, 'cache', 'deferred.requested'), DRAIN_RETRY_MS);
  return name;
}

/** The request a replayed run reads its inputs from. */
export function readRequest(path: string): DeferredRequest {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as DeferredRequest;
    if (typeof value.command !== 'string' || !Array.isArray(value.argv) || typeof value.inputs !== 'object') throw new Error('not a request');
    return value;
  } catch (err) {
    throw new CairnError('store', `cannot read the deferred request ${path} (${describeError(err)})`);
  }
}

/** Take the oldest waiting request (or one taken by a run that died): renamed, so that one run takes it. */
function takeOldest(dir: string): string | undefined {
  const now = Date.now();
  const offered = names(dir)
    .filter((n) => n.endsWith(WAITING) || (n.endsWith(TAKEN) && now - mtime(join(dir, n)) > STALE_TAKEN_MS))
    .sort();
  for (const name of offered) {
    const taken = join(dir, `${name.replace(TAKEN_OR_WAITING, '')}.${process.pid}${TAKEN}`);
    try {
      renameSync(join(dir, name), taken);
      return taken;
    } catch {
      // another run took it first
    }
  }
  return undefined;
}

/** A request file's suffix: `.json` while it waits, `.<pid>.taken` while a run has it. */
const TAKEN_OR_WAITING = /(\.\d+\.taken|\.json)$/;

const mtime = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
};

const require = createRequire(import.meta.url);

/**
 * Run every deferred request of the store, oldest first, each as the process it would have been (so
 * that its command's own code, flags and fail-open rules apply), with the index current. Returns how
 * many ran; a request whose run fails is reported by that run (errors.log) and not run again.
 */
export function runDeferred(store: Store): number {
  const dir = deferredDir(store.dir);
  const cairn = cairnEntry();
  if (!cairn) {
    if (deferredCount(store.dir)) throw new CairnError('store', 'deferred writes are waiting, but bin/cairn.js is not beside this command to run them');
    return 0;
  }
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  let ran = 0;
  for (let path = takeOldest(dir); path; path = takeOldest(dir)) {
    let request: DeferredRequest;
    try {
      request = readRequest(path);
    } catch (err) {
      renameSync(path, path.replace(TAKEN_OR_WAITING, UNREADABLE)); // kept for a person to look at, never run
      store.log.warn((err as Error).message);
      continue;
    }
    // no deadline: the index is current, and this runs in the background or at a person's request
    const child = spawnSync(process.execPath, [cairn, request.command, ...request.argv], {
      cwd: existsSync(request.cwd) ? request.cwd : store.location.root,
      env: { ...process.env, [DEFERRED_ENV]: path, CAIRN_DEADLINE_MS: '0' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (child.error || child.status === DEFERRED_AGAIN) {
      renameSync(path, path.replace(TAKEN_OR_WAITING, WAITING)); // offered again to the next run
      if (child.error) throw new CairnError('store', `cannot run the deferred ${request.command} (${child.error.message})`);
      store.log.warn(`the kept ${request.command} could not apply yet; it waits for the next cairn rebuild --continue`);
      return ran;
    }
    rmSync(path, { force: true });
    ran++;
  }
  return ran;
}
