import { CairnError } from './errors.js';

// The deadline (SPEC §2): a hook or pipeline step finishes within CAIRN_DEADLINE_MS. It is enforced
// where the work is: `check` between steps (input read, store opened, each indexing slice, before a
// change is recorded), `waitLimit` on every wait for another process (locks, SQLite's busy wait), and
// the runner's timer for a wait on I/O. What happens past it is decided in lib/cli/outcome.ts.

/** A hook's deadline unless CAIRN_DEADLINE_MS says otherwise (SPEC §2). */
export const HOOK_DEADLINE_MS = 2000;
const MAX_WAIT_MS = 10_000;
const PERSON_WAIT_MS = 800;

export class Deadline {
  constructor(
    readonly ms: number,
    /** When it passes: `ms` from now, unless it was started earlier (a hook's gate: lib/cli/gate.ts). */
    readonly at = ms > 0 ? Date.now() + ms : Infinity,
    /** Of a command a person runs (`list`, `promote`, …): see waitLimit. */
    readonly person = false,
  ) {}
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  passed(): boolean {
    return Date.now() >= this.at;
  }
  /**
   * How long one wait for another process (a lock, SQLite's busy wait) may last: what is left of the
   * deadline, at most 10 s. A command a person runs without a deadline waits under a second, then its
   * one line says what holds the lock: the person hears it at once, rather than watch a silent
   * terminal. Maintenance (cron, background jobs) waits the 10 s.
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

/** Block the thread briefly without spinning (lock waits are synchronous by design). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
