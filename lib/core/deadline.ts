import { CairnError } from './errors.js';

// SPEC §2: `check` between steps, `waitLimit` on each wait for another process, the runner's timer on I/O;
// lib/cli/outcome.ts decides what happens past it.

export const HOOK_DEADLINE_MS = 2000;
const MAX_WAIT_MS = 10_000;
const PERSON_WAIT_MS = 800;

export class Deadline {
  constructor(
    readonly ms: number,
    /** Earlier when a hook's gate started it. */
    readonly at = ms > 0 ? Date.now() + ms : Infinity,
    readonly person = false,
  ) {}
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  passed(): boolean {
    return Date.now() >= this.at;
  }
  /** At most 10 s; without a deadline a person waits under a second, then sees the holder. */
  waitLimit(): number {
    if (Number.isFinite(this.at)) return Math.min(this.remaining(), MAX_WAIT_MS);
    return this.person ? PERSON_WAIT_MS : MAX_WAIT_MS;
  }
  check(what: string): void {
    if (this.passed()) throw new CairnError('deadline', `deadline of ${this.ms} ms passed during ${what}`);
  }
}

export function deadlineFromEnv(defaultMs: number, person = false): Deadline {
  const raw = process.env.CAIRN_DEADLINE_MS;
  const parsed = raw === undefined || raw === '' ? NaN : Number(raw);
  return new Deadline(Number.isFinite(parsed) && parsed >= 0 ? parsed : defaultMs, undefined, person);
}

/** Lock waits are synchronous by design. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
