import { CairnError } from './errors.js';

// Every executable must finish within CAIRN_DEADLINE_MS; long synchronous work checks in between steps.

/** A hook's deadline unless CAIRN_DEADLINE_MS says otherwise (SPEC §2). */
export const HOOK_DEADLINE_MS = 2000;
const MAX_WAIT_MS = 10_000;
const PERSON_WAIT_MS = 800;

export class Deadline {
  constructor(
    readonly ms: number,
    /** When it passes: `ms` from now, unless it was started earlier (a hook's gate: lib/cli/gate.ts). */
    readonly at = ms > 0 ? Date.now() + ms : Infinity,
  ) {}
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  passed(): boolean {
    return Date.now() >= this.at;
  }
  /**
   * How long one wait for another process (a lock, SQLite's busy wait) may last: what is left of the
   * deadline, at most 10 s; without a deadline — a command a person runs, who should hear at once
   * what holds it up rather than watch a silent terminal — a second.
   */
  waitLimit(): number {
    return Number.isFinite(this.at) ? Math.min(this.remaining(), MAX_WAIT_MS) : PERSON_WAIT_MS;
  }
  check(what: string): void {
    if (this.passed()) throw new CairnError('deadline', `deadline of ${this.ms} ms passed during ${what}`);
  }
}

/** CAIRN_DEADLINE_MS when set (0 = none), else the command's own default. */
export function deadlineFromEnv(defaultMs: number): Deadline {
  const raw = process.env.CAIRN_DEADLINE_MS;
  const parsed = raw === undefined || raw === '' ? NaN : Number(raw);
  return new Deadline(Number.isFinite(parsed) && parsed >= 0 ? parsed : defaultMs);
}

/** Block the thread briefly without spinning (lock waits are synchronous by design). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
