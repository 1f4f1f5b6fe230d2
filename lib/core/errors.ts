// One error type for everything cairn reports on purpose; lib/cli/outcome.ts decides what each one does
// (exit code, keep the run, health record) in one place.
export type ErrorKind =
  | 'usage' // bad flags or arguments: a configuration bug in the caller
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

/**
 * The index is still catching up with its log (a fresh clone's replay, its indexes being built): not
 * a fault, only not yet. A writer keeps its run for later instead of failing (lib/store/deferred.ts).
 */
export class IndexCatchingUp extends CairnError {}

/** The kind of any thrown value; an unexpected exception is 'internal'. */
export function errorKind(err: unknown): ErrorKind | 'internal' {
  return err instanceof CairnError ? err.kind : 'internal';
}

/** A one-line description of any thrown value, for stderr and errors.log. */
export function describeError(err: unknown): string {
  // JSON.parse's message quotes the input it could not read, which may be anything (SPEC §4.6); a
  // caller that knows the text names the place instead (lib/core/json.ts)
  if (err instanceof SyntaxError && /JSON/.test(err.message)) {
    return `invalid JSON${/ at position \d+/.exec(err.message)?.[0] ?? ''}`;
  }
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
