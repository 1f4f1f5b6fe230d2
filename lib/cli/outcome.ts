import { errorKind, IndexCatchingUp } from '../core/errors.js';
import { DEFERRED_AGAIN, DEFERRED_TOO_LONG } from '../core/deferred-env.js';
import { isCorruption } from '../store/db.js';

// Fail open (SPEC §2), decided in one place: what a run's end — finished, thrown, or cut by the
// deadline's timer — does. Where the deadline is enforced: `Deadline.check` between steps and
// `Deadline.waitLimit` on every wait (lib/core/deadline.ts; called by Store.indexed, Store.appendLines
// and each slice of the follower), and `armDeadlineTimer` in lib/cli/runner.ts for a wait on I/O.
// Past it, and past any other failure, `decide` below says what happens:
//
// - a writer that meets a passing failure (the deadline, a lock, the index catching up) before it
//   recorded anything keeps its run for later, in order (lib/store/deferred.ts applies it), and exits 0;
// - a run that recorded its change (the append is the commit point) never reports a failure: the
//   caller would retry and record it twice; the next run catches up;
// - anything else is one stderr line, recorded in the health record for `cairn doctor` and the
//   session start, and exit 0 — 1 under --strict, 2 for a usage error at a terminal or under --strict.

/** What went wrong, as far as the policy cares. */
export type Failure =
  | 'usage' // a caller's mistake: bad flags or arguments
  | 'deadline' // the deadline passed (during the work, or as the index caught up)
  | 'busy' // a lock held, or the index catching up with its log: a later run would not meet it
  | 'corrupt' // a corrupt page in the database, which is a cache of the logs
  | 'fault'; // anything else: bad input, a broken store, a bug

export function classify(err: unknown): Failure {
  if (isCorruption(err)) return 'corrupt';
  const kind = errorKind(err);
  if (kind === 'usage' || kind === 'deadline') return kind;
  if (kind === 'lock' || err instanceof IndexCatchingUp) return 'busy';
  return 'fault';
}

export interface Situation {
  /** How the run ended: its command returned, threw, or the deadline's timer fired while it waited on I/O. */
  ended: 'finished' | 'threw' | 'timed-out';
  /** What it threw ('threw'; 'deadline' for 'timed-out'). */
  failure?: Failure;
  /** The deadline had passed when the command returned. */
  late?: boolean;
  /** The exit code the command returned, if any. */
  returned?: number;
  /** The run appended to a log of the store: its change stands whatever happens next. */
  committed: boolean;
  /** A writer whose runs are kept for later (its command is deferrable, not a preview) with its store open. */
  keepsRuns: boolean;
  /** This run is a kept run being applied (`CAIRN_DEFERRED`). */
  replayed: boolean;
  /** The run opened its store (a corrupt index can be moved aside). */
  hasStore: boolean;
  strict: boolean;
  /** stderr is a terminal: a person sees the line. */
  interactive: boolean;
  /** --json: a failure is also a JSON object on stdout. */
  json: boolean;
}

/** The one stderr line a run ends with (see `lineText`), or the lines it held, as they are ('done'). */
export type Line =
  | 'done'
  | 'late' // a warning that it finished past its deadline, then the held lines
  | 'after-commit' // a warning with the failure, then the held lines
  | 'timed-out-after-commit' // a warning that nothing is printed, then the held lines
  | 'kept'
  | 'replay-too-long'
  | 'replay-again'
  | 'skipped' // the failure, the pipeline continues (exit 0)
  | 'failed'; // the failure, exit non-zero

export interface Outcome {
  exit: number;
  /** Keep the run as a request (lib/store/deferred.ts); when it cannot be kept, decide again with keepsRuns false. */
  keep: boolean;
  /** Move the corrupt database aside: the next run rebuilds it from the log. */
  quarantine: boolean;
  /** The health record: a line for `cairn doctor` and the session start, cleared by a success, or left. */
  health: 'record' | 'clear' | 'leave';
  line: Line;
  /** The product (held until now), a JSON error object, a JSON note that the run was kept, or nothing. */
  stdout: 'product' | 'error' | 'deferred' | 'nothing';
}

/**
 * Exit 0 unless --strict, which exits 1 (2 for a usage error). A usage error is a configuration bug,
 * not a runtime fault: a person at a terminal gets exit 2 at once; a pipeline or hook continues.
 */
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
  // a run that returned past its deadline without recording anything failed as if the deadline had stopped it
  const f: Failure = failure ?? 'deadline';
  const quarantine = f === 'corrupt' && s.hasStore && !s.strict;
  // the timer ends the process at once: the run is not kept then (the runner arms it only for runs that do not keep)
  if (s.ended !== 'timed-out' && s.keepsRuns && !s.committed && passing(f)) {
    // A kept run out of its own deadline is too long to apply in the background: the applier sets it
    // aside and records that. Any other passing failure: it waits for the next applier, recorded here.
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
    // kept is not a failure (exit 0, under --strict too), and not done either: the health record stays as it is
    return { exit: 0, keep: true, quarantine, health: 'leave', line: 'kept', stdout: s.json ? 'deferred' : 'nothing' };
  }
  if (s.committed) {
    if (s.ended === 'timed-out')
      return { exit: 0, keep: false, quarantine, health: 'leave', line: 'timed-out-after-commit', stdout: 'nothing' };
    return { exit: 0, keep: false, quarantine, health: 'leave', line: 'after-commit', stdout: 'product' };
  }
  const exit = exitCode(f, s);
  // A usage mistake at a terminal was seen by the person who made it; recorded, it would open every
  // agent session with "memory degraded". In a pipeline or hook nobody sees stderr: it is recorded.
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

/** The text of a run's last line (the logger prefixes `cairn <name>: `); undefined for 'done'. */
export function lineText(
  line: Line,
  facts: { message: string; deadlineMs: number; kept?: string },
): string | undefined {
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
