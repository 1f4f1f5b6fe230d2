import { errorKind, IndexCatchingUp } from '../core/errors.js';
import { DEFERRED_AGAIN, DEFERRED_TOO_LONG } from '../core/deferred-env.js';
import { isCorruption } from '../store/db.js';

// Fail open (SPEC §2), decided in one place; the deadline itself is enforced in lib/core/deadline.ts.
// A committed run never reports failure: a retry would record twice.

export type Failure =
  | 'usage'
  | 'deadline'
  | 'busy' // a lock, or the index catching up: a later run would not meet it
  | 'corrupt' // the database is a cache of the logs
  | 'fault';

export function classify(err: unknown): Failure {
  if (isCorruption(err)) return 'corrupt';
  const kind = errorKind(err);
  if (kind === 'usage' || kind === 'deadline') return kind;
  if (kind === 'lock' || err instanceof IndexCatchingUp) return 'busy';
  return 'fault';
}

export interface Situation {
  ended: 'finished' | 'threw' | 'timed-out';
  failure?: Failure;
  late?: boolean;
  returned?: number;
  /** Appended to a log: the change stands whatever happens next. */
  committed: boolean;
  /** A deferrable writer, not a preview, with its store open. */
  keepsRuns: boolean;
  replayed: boolean;
  hasStore: boolean;
  strict: boolean;
  interactive: boolean;
  json: boolean;
}

/** 'done': the held lines as they are. */
export type Line =
  | 'done'
  | 'late'
  | 'after-commit'
  | 'timed-out-after-commit'
  | 'kept'
  | 'replay-too-long'
  | 'replay-again'
  | 'skipped'
  | 'failed';

export interface Outcome {
  exit: number;
  /** Keep as a request; if that fails, decide again with keepsRuns false. */
  keep: boolean;
  quarantine: boolean;
  health: 'record' | 'clear' | 'leave';
  line: Line;
  stdout: 'product' | 'error' | 'deferred' | 'nothing';
}

/** A usage error exits 2 at a terminal or under --strict. */
export function exitCode(failure: Failure, opts: { strict: boolean; interactive: boolean }): number {
  if (failure === 'usage') return opts.strict || opts.interactive ? 2 : 0;
  return opts.strict ? 1 : 0;
}

const passing = (f: Failure | undefined) => f === 'deadline' || f === 'busy';

export function decide(s: Situation): Outcome {
  const failure = s.ended === 'timed-out' ? 'deadline' : s.failure;
  if (s.ended === 'finished' && !(s.late && !s.committed)) {
    return {
      exit: s.returned ?? 0,
      keep: false,
      quarantine: false,
      health: 'clear',
      line: s.late ? 'late' : 'done',
      stdout: 'product',
    };
  }
  // returned late without recording anything: as if the deadline had stopped it
  const f: Failure = failure ?? 'deadline';
  const quarantine = f === 'corrupt' && s.hasStore && !s.strict;
  // the timer ends the process at once, so it is armed only for runs that do not keep
  if (s.ended !== 'timed-out' && s.keepsRuns && !s.committed && passing(f)) {
    // a kept run out of its own deadline is set aside; other passing failures wait for the next applier
    if (s.replayed) {
      if (f === 'deadline')
        return {
          exit: DEFERRED_TOO_LONG,
          keep: false,
          quarantine,
          health: 'leave',
          line: 'replay-too-long',
          stdout: 'nothing',
        };
      return {
        exit: DEFERRED_AGAIN,
        keep: false,
        quarantine,
        health: 'record',
        line: 'replay-again',
        stdout: 'nothing',
      };
    }
    // kept is neither failure (exit 0 under --strict) nor done: the health record stays
    return { exit: 0, keep: true, quarantine, health: 'leave', line: 'kept', stdout: s.json ? 'deferred' : 'nothing' };
  }
  if (s.committed) {
    if (s.ended === 'timed-out')
      return { exit: 0, keep: false, quarantine, health: 'leave', line: 'timed-out-after-commit', stdout: 'nothing' };
    return { exit: 0, keep: false, quarantine, health: 'leave', line: 'after-commit', stdout: 'product' };
  }
  const exit = exitCode(f, s);
  // recorded, a usage mistake at a terminal would open every agent session with "memory degraded"
  const health = f === 'usage' && s.interactive ? 'leave' : 'record';
  return {
    exit,
    keep: false,
    quarantine,
    health,
    line: exit === 0 ? 'skipped' : 'failed',
    stdout: s.json ? 'error' : 'nothing',
  };
}

export function lineText(line: Line, facts: { message: string; deadlineMs: number; kept?: string }): string | undefined {
  const { message, deadlineMs } = facts;
  switch (line) {
    case 'done':
      return undefined;
    case 'late':
      return `finished past the deadline of ${deadlineMs} ms; the change is recorded`;
    case 'after-commit':
      return `${message} (after the change was recorded; the next run catches up)`;
    case 'timed-out-after-commit':
      return `deadline of ${deadlineMs} ms passed after the change was recorded; nothing printed`;
    case 'kept':
      return `${message}: this run is kept ${facts.kept}`;
    case 'replay-too-long':
      return `a kept run ran out of its ${deadlineMs} ms: ${message}`;
    case 'replay-again':
      return `a kept run is not applied yet: ${message}`;
    case 'skipped':
      return `skipped (pipeline continues): ${message}`;
    case 'failed':
      return message;
  }
}
