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

/** A writer keeps its run for later. */
export class IndexCatchingUp extends CairnError {}

export function errorKind(err: unknown): ErrorKind | 'internal' {
  return err instanceof CairnError ? err.kind : 'internal';
}

export function describeError(err: unknown): string {
  // JSON.parse's message quotes its input (SPEC §4.6)
  if (err instanceof SyntaxError && /JSON/.test(err.message)) {
    return `invalid JSON${/ at position \d+/.exec(err.message)?.[0] ?? ''}`;
  }
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
