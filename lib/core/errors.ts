// One error type for everything cairn reports on purpose; the runner maps it to an exit code in one place.
export type ErrorKind =
  | 'usage' // bad flags or arguments
  | 'input' // malformed input (stdin, files, verdicts)
  | 'store' // .cairn/ missing, unreadable or unwritable
  | 'database' // SQLite missing, corrupt or busy
  | 'lock' // advisory lock not acquired in time
  | 'deadline' // CAIRN_DEADLINE_MS passed
  | 'not-found'; // a named pattern, file or record does not exist

export class CairnError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'CairnError';
  }
}

/** Exit code under --strict; without it every error exits 0 (fail open, SPEC §2). */
export function strictExitCode(err: unknown): number {
  return err instanceof CairnError && err.kind === 'usage' ? 2 : 1;
}

/** A one-line description of any thrown value, for stderr and errors.log. */
export function describeError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
