import { CairnError } from './errors.js';

// The deadline (SPEC §2) is enforced where the work is: `check` between steps (input read, store opened, each
// indexing slice, before a change is recorded), `waitLimit` on each wait for another process (locks, SQLite's
// busy wait), the runner's timer on a wait for I/O. lib/cli/outcome.ts decides what happens past it.

/** A hook's deadline unless CAIRN_DEADLINE_MS says otherwise (SPEC §2). */
export const HOOK_DEADLINE_MS = 2000;
const MAX_WAIT_MS = 10_000;
const PERSON_WAIT_MS = 800;

export class Deadline {
  constructor(
    readonly ms: number,
    /** `ms` from now, unless started earlier (a hook's gate). */
    readonly at = ms > 0 ? Date.now() + ms : Infinity,
    /** A command a person runs: see waitLimit. */
    readonly person = false,
  ) {}
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  passed(): boolean {
    return Date.now() >= this.at;
  }
  /**
   * One wait for another process: the deadline's rest, at most 10 s; without one, a person's command waits
   * under a second so its line says at once what holds the lock.
   */
  waitLimit(): number {
    if (Number.isFinite(this.at)) return Math.min(this.remaining(), MAX_WAIT_MS);
    return this.person ? PERSON_WAIT_MS : MAX_WAIT_MS;
  }
  check(what: string): void {
    if (this.passed()) throw new CairnError('deadline', `deadline of ${this.ms} ms passed during ${what}`);
  }
}

/** CAIRN_DEADLINE_MS when set (0 = none), else the command's own default. */
export function deadlineFromEnv(defaultMs: number, person = false): Deadline {
  const raw = process.env.CAIRN_DEADLINE_MS;
  const parsed = raw === undefined || raw === '' ? NaN : Number(raw);
  return new Deadline(Number.isFinite(parsed) && parsed >= 0 ? parsed : defaultMs, undefined, person);
}

/** Block the thread without spinning (lock waits are synchronous by design). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
