import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CairnError, describeError } from '../core/errors.js';
import { randomBytes } from '../core/crypto.js';
import { lockHolder, tryLock } from '../io/lock.js';
import { cairnEntry, startJob } from './background.js';
import { recordFailure } from './health.js';
import { DEFERRED_AGAIN, DEFERRED_ENV, DEFERRED_TOO_LONG } from '../core/deferred-env.js';
import type { Store } from './store.js';

// Writers' runs kept for later (SPEC §2; docs/internals.md, "The deadline and keep-for-later").

export interface DeferredRequest {
  command: string;
  argv: string[];
  cwd: string;
  inputs: Record<string, string>;
}

/** 60 s (thirty times a writer's deadline), or a third of the job's own if less. */
export const KEPT_RUN_MS = 60_000;
const keptRunShare = (jobMs: number) => Math.floor(Math.min(KEPT_RUN_MS, jobMs / 3));
/** Outliving its deadline this many times over (a step that never looks at it): killed. */
const KILL_AFTER = 1.25;
/** Longer than this waiting for its writer's job: doctor calls it stranded. */
export const START_GRACE_MS = 15_000;

const WAITING = '.json';
const TAKEN = '.taken';
const UNREADABLE = '.unreadable';
const TOO_LONG = '.failed';

export const deferredDir = (storeDir: string) => join(storeDir, 'cache', 'deferred');

const names = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return []; // nothing ever deferred
  }
};

const pending = (storeDir: string) => names(deferredDir(storeDir)).filter((n) => n.endsWith(WAITING) || n.endsWith(TAKEN));

export function deferredCount(storeDir: string): number {
  return pending(storeDir).length;
}

export function unreadableDeferred(storeDir: string): string[] {
  return names(deferredDir(storeDir)).filter((n) => n.endsWith(UNREADABLE));
}

/** `cairn rebuild --continue` at a terminal runs them. */
export function tooLongDeferred(storeDir: string): string[] {
  return names(deferredDir(storeDir)).filter((n) => n.endsWith(TOO_LONG));
}

export function oldestDeferred(storeDir: string): number | undefined {
  const oldest = pending(storeDir).sort()[0];
  return oldest === undefined ? undefined : Number(oldest.slice(0, 15));
}

export function applier(storeDir: string): string | undefined {
  return lockHolder(deferredDir(storeDir));
}

export interface Kept {
  name: string;
  applied: string;
}

export function deferRequest(store: Store, request: DeferredRequest): Kept {
  const name = `${String(Date.now()).padStart(15, '0')}-${randomBytes(4).toString('hex')}${WAITING}`;
  store.writeFile(join(deferredDir(store.dir), name), JSON.stringify(request));
  return { name, applied: startApplying(store) };
}

function startApplying(store: Store): string {
  // after the request is written: a holder that lets go now looks once more
  const holder = applier(store.dir);
  if (holder) return `by the cairn rebuild --continue that applies kept runs now (cache/deferred.lock ${holder})`;
  const pid = startJob(store, 'apply-kept');
  if (pid !== undefined) return `by cairn rebuild --continue, started in the background (pid ${pid})`;
  return 'when cairn rebuild --continue runs (none could be started in the background: run it)';
}

export function readRequest(path: string): DeferredRequest {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as DeferredRequest;
    if (typeof value.command !== 'string' || !Array.isArray(value.argv) || typeof value.inputs !== 'object')
      throw new Error('not a request');
    return value;
  } catch (err) {
    throw new CairnError('store', `cannot read the deferred request ${path} (${describeError(err)})`);
  }
}

/** One found taken belongs to a dead holder: offered again (writers are idempotent, SPEC §3.9.4). */
function takeOldest(dir: string): string | undefined {
  const offered = names(dir)
    .filter((n) => n.endsWith(WAITING) || n.endsWith(TAKEN))
    .sort();
  for (const name of offered) {
    const taken = join(dir, `${name.replace(TAKEN_OR_WAITING, '')}.${process.pid}${TAKEN}`);
    try {
      renameSync(join(dir, name), taken);
      return taken;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** `.json` waiting, `.<pid>.taken` while a run has it, `.failed` once set aside. */
const TAKEN_OR_WAITING = /(\.\d+\.taken|\.json|\.failed)$/;

const require = createRequire(import.meta.url);

type Stop = 'done' | 'again' | 'deadline';

/** Oldest first; a person's run (no deadline) retries the set-aside ones. */
export function runDeferred(store: Store): number {
  const dir = deferredDir(store.dir);
  const cairn = cairnEntry();
  if (!cairn) {
    if (deferredCount(store.dir))
      throw new CairnError('store', 'deferred writes are waiting, but bin/cairn.js is not beside this command to run them');
    return 0;
  }
  const bounded = Number.isFinite(store.deadline.at);
  let ran = 0;
  for (;;) {
    const lock = tryLock(dir);
    if (!lock) return ran; // another process applies them, and looks again after letting go
    let stop: Stop;
    try {
      if (!bounded)
        for (const name of tooLongDeferred(store.dir)) renameSync(join(dir, name), join(dir, name.replace(TAKEN_OR_WAITING, WAITING)));
      const drained = drain(store, cairn, bounded);
      ran += drained.ran;
      stop = drained.stop;
    } finally {
      lock.release();
    }
    // after letting go: a run kept after the last look, whose writer saw the lock held, is here
    if (deferredCount(store.dir) === 0 || stop === 'again') return ran;
    if (stop === 'deadline') {
      startJob(store, 'apply-kept');
      return ran;
    }
  }
}

function drain(store: Store, cairn: string, bounded: boolean): { ran: number; stop: Stop } {
  const dir = deferredDir(store.dir);
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const share = keptRunShare(store.deadline.ms);
  const killAt = Math.ceil(share * KILL_AFTER);
  let ran = 0;
  for (let path = takeOldest(dir); path; path = takeOldest(dir)) {
    const backTo = (suffix: string) => renameSync(path!, path!.replace(TAKEN_OR_WAITING, suffix));
    if (bounded && store.deadline.remaining() < killAt) {
      backTo(WAITING);
      return { ran, stop: 'deadline' };
    }
    let request: DeferredRequest;
    try {
      request = readRequest(path);
    } catch (err) {
      backTo(UNREADABLE);
      store.log.warn((err as Error).message);
      continue;
    }
    const child = spawnSync(process.execPath, [cairn, request.command, ...request.argv], {
      cwd: existsSync(request.cwd) ? request.cwd : store.location.root,
      env: { ...process.env, [DEFERRED_ENV]: path, CAIRN_DEADLINE_MS: String(bounded ? share : 0) },
      stdio: ['ignore', 'ignore', 'inherit'],
      // a step that never looks at the deadline (a parser on a hostile text) is killed
      ...(bounded ? { timeout: killAt, killSignal: 'SIGKILL' as const } : {}),
    });
    if (child.status === DEFERRED_TOO_LONG || child.signal === 'SIGKILL') {
      backTo(TOO_LONG);
      const message =
        `a kept ${request.command} was not applied within ${share} ms and is set aside ` +
        `(cache/deferred/); cairn rebuild --continue at a terminal applies it without a bound`;
      store.log.warn(message);
      recordFailure(store.dir, request.command, message);
      continue;
    }
    if (child.error || child.status === DEFERRED_AGAIN) {
      backTo(WAITING); // offered to the next run
      if (child.error) throw new CairnError('store', `cannot run the deferred ${request.command} (${child.error.message})`);
      store.log.warn(`the kept ${request.command} could not apply yet; it waits for the next cairn rebuild --continue`);
      return { ran, stop: 'again' };
    }
    rmSync(path, { force: true });
    ran++;
  }
  return { ran, stop: 'done' };
}
