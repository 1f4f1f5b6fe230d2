// The one error type; lib/cli/outcome.ts decides what each kind does.
export type ErrorKind =
  | 'usage' // bad flags or arguments: a configuration bug in the caller
  | 'input'
  | 'store'
  | 'database' // SQLite missing, corrupt or busy
  | 'lock'
  | 'deadline'
  | 'not-found';

export class CairnError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'CairnError';
  }
}

/** The index is still catching up with its log: a writer keeps its run for later (lib/store/deferred.ts). */
export class IndexCatchingUp extends CairnError {}

/** The kind of any thrown value; an unexpected exception is 'internal'. */
export function errorKind(err: unknown): ErrorKind | 'internal' {
  return err instanceof CairnError ? err.kind : 'internal';
}

/** One line describing any thrown value (stderr, errors.log). */
export function describeError(err: unknown): string {
  // JSON.parse's message quotes its input (SPEC §4.6)
  if (err instanceof SyntaxError && /JSON/.test(err.message)) {
    return `invalid JSON${/ at position \d+/.exec(err.message)?.[0] ?? ''}`;
  }
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
