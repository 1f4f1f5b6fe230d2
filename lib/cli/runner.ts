import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type minimist from 'minimist';
import { CairnError, describeError, errorKind, exitCode, IndexCatchingUp } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import { nearest } from '../core/suggest.js';
import { clearFailure, recordFailure } from '../store/health.js';
import { Deadline, deadlineFromEnv } from '../core/deadline.js';
import { openStore, type Store, type StoreOptions } from '../store/store.js';
import { isCorruption } from '../store/db.js';
import { locate, type Location } from '../store/root.js';
import { parseFlags, type FlagSpec } from './flags.js';
import { stdinText } from './input.js';
import type { BoundedInput } from '../io/read.js';
import type { BeadListing } from '../knowledge/beads.js';
import { writeStdout } from '../io/stdout.js';
import { redactStrings } from '../core/secrets.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { DEFERRED_AGAIN, DEFERRED_TOO_LONG, deferRequest, readRequest, type DeferredRequest, type Kept } from '../store/deferred.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';
import type { Progress } from '../core/progress.js';
import { progressLine, type ProgressLine } from './progress.js';

// The shared runner: every executable is a Command in scripts/<name>.ts. tools/bundle.js builds one
// file per command (dist/bin/<name>.cjs) so a hook starts by loading one module, not thirty.
// It parses flags, runs, and maps any error to the fail-open contract in one place (SPEC §2).

export type { FlagSpec } from './flags.js';

export interface Command {
  name: string;
  /** Usage text for --help, with an example. */
  usage: string;
  flags: FlagSpec;
  /** Whether the command takes positional arguments (a pattern id or text); the others refuse them. */
  operands?: boolean;
  /** Hooks and pipeline steps finish within CAIRN_DEADLINE_MS (default 2000); maintenance commands have no deadline by default. */
  deadlineMs: number;
  /** A server (`cairn mcp`) runs until its client leaves: CAIRN_DEADLINE_MS bounds each request, not the process. */
  server?: boolean;
  /** A command a person runs: without a deadline, it waits for a lock under a second, then names the holder (Deadline.waitLimit). */
  person?: boolean;
  /**
   * A writer of memory (the pattern loop's, memory-capture): on a passing failure (the index catching up with its log, a lock or
   * the deadline) its run is kept and applied later, in order, instead of failing open and losing what
   * it was given (lib/store/deferred.ts).
   */
  deferrable?: boolean;
  /** A number returned is the exit code (`cairn doctor` exits 1 when a check fails); errors still fail open. */
  run(ctx: Context): Promise<void | number> | void | number;
}

export interface Context {
  name: string;
  args: minimist.ParsedArgs;
  strict: boolean;
  deadline: Deadline;
  log: Logger;
  /** Buffer product output; it reaches stdout only if the command succeeds. */
  print(text: string): void;
  /** The product as one JSON object (--json), keys in the one naming style of cairn's JSON: snake_case. */
  json(value: unknown): void;
  /** Stdin as text (bounded; empty for a TTY). */
  stdin(): Promise<string>;
  /**
   * A progress line for a phase of long work (`what` names it), drawn on stderr when it is a terminal
   * and nothing otherwise (lib/cli/progress.ts); a new phase ends the last one's line.
   */
  progress(what: string, opts?: { bytes?: boolean }): Progress;
  /** The texts this run read, by flag (`stdin` for stdin): what a deferred run is given again. */
  inputs: Record<string, string>;
  /** A writer whose run is kept for later on a passing failure (its command is deferrable; not a preview). */
  keepsRuns: boolean;
  /** A deferred run's texts, read from its request instead of stdin and files. */
  replayed?: Record<string, string>;
  /** What a hook gate started before the runner was loaded (scripts/<name>.gate.ts). */
  gate?: GatePassed;
  /** Where the project and its store are (--root, --dir, --project and their defaults). */
  location(): Location;
  /**
   * The project store, opened on first call. A hook passes its payload's cwd (SPEC §1.2: after
   * $CLAUDE_PROJECT_DIR, before the current directory); a writer may create the store.
   */
  store(opts?: StoreOptions): Store;
}

/** Flags every command accepts. */
const COMMON: Required<FlagSpec> = {
  string: ['root', 'dir', 'project'],
  list: [],
  boolean: ['strict', 'help', 'version', 'json', 'quiet'],
  alias: { h: 'help' },
};

/** Every command `cairn` knows, with the line `cairn --help` shows for it (known without loading any). */
export const COMMANDS: Record<string, string> = {
  'store-deliberation': 'store a deliberation and learn its patterns',
  'format-patterns': 'print the historical-patterns block for a role',
  'store-summary': 'store a summary of a role\'s patterns for format-patterns',
  'feedback-loop': 'apply a validator\'s verdict to the adversarial role\'s patterns',
  'outcome-score': 'grade the patterns injected in an issue/run by its result',
  rebuild: 'rebuild the database from .cairn/events.jsonl',
  events: 'read the event log',
  explain: 'show a pattern\'s history and score factors',
  list: 'list patterns with score and record',
  promote: 'promote a pattern to active',
  deprecate: 'deprecate a pattern',
  maintain: 'apply the automatic deprecation rules (cron)',
  embed: 'compute embeddings with the configured provider',
  init: 'create .cairn/ in a project',
  'memory-capture': 'capture typed knowledge from a bd comment (hook, --text or --from-bd-json)',
  'auto-recall': 'print the knowledge relevant to a session (session-start hook)',
  recall: 'search the knowledge log',
  rotate: 'move the oldest knowledge to the archive (cron)',
  sanitize: 'build the active knowledge cache and its audit',
  curate: 'propose or apply reviewed curation lines for the knowledge log',
  patterns: 'list, search or capture landing patterns',
  scrub: 'rewrite the committed logs with their secrets redacted',
  doctor: 'check that cairn works here: modules, database, logs, errors, hooks, secrets',
  mcp: 'serve the memory to an agent over MCP (stdio): recall, remember, patterns, explain, landings',
  report: 'write an HTML page of what cairn learned here',
};

/** What a hook gate (gate.ts) hands on: the deadline it started, and stdin when it has read it. */
export interface GatePassed {
  deadline: Deadline;
  stdin?: Promise<BoundedInput>;
  /** auto-recall's bd listings, started by its gate. */
  beads?: BeadListing;
}

/** An executable: run one command with its arguments; the exit code goes to process.exitCode. */
export async function main(command: Command, argv: string[], passed?: GatePassed): Promise<void> {
  process.exitCode = await runCommand(command, argv, passed);
}

/**
 * `cairn <name> …`: usage and unknown names here; a known name runs through `runNamed`, which loads
 * that command's own bundle and runs it there (one runner, one error class, per process path).
 */
export async function cairn(argv: string[], runNamed: (name: string, argv: string[]) => Promise<void>): Promise<void> {
  const sub = argv[0];
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    writeStdout(cairnUsage());
    return;
  }
  if (sub === '--version') {
    writeStdout(`cairn ${version()}\n`);
    return;
  }
  const { args } = parseFlags(COMMON, argv.slice(1), true);
  if (!(sub in COMMANDS)) {
    const guess = nearest(sub, Object.keys(COMMANDS));
    const err = new CairnError('usage', `unknown command '${sub}'${guess ? ` (did you mean ${guess}?)` : ''}; see cairn --help`);
    process.exitCode = reportFailure('cairn', err, args);
    return;
  }
  try {
    await runNamed(sub, argv.slice(1));
  } catch (err) {
    process.exitCode = reportFailure(`cairn ${sub}`, new Error(`cannot load the command (${describeError(err)})`), args);
  }
}

export async function runCommand(command: Command, argv: string[], passed?: GatePassed): Promise<number> {
  const spec: Required<FlagSpec> = {
    string: [...COMMON.string, ...(command.flags.string ?? [])],
    list: [...COMMON.list, ...(command.flags.list ?? [])],
    boolean: [...COMMON.boolean, ...(command.flags.boolean ?? [])],
    alias: { ...COMMON.alias, ...(command.flags.alias ?? {}) },
  };
  const { args, problem } = parseFlags(spec, argv, command.operands ?? false);
  const label = `cairn ${command.name}`;
  if (args.help) {
    writeStdout(command.usage.endsWith('\n') ? command.usage : command.usage + '\n');
    return 0;
  }
  if (args.version) {
    writeStdout(`cairn ${version()}\n`);
    return 0;
  }
  const strict = isStrict(args);
  // held until the outcome is known, for one line on a failure; a server's run has no one outcome and prints as it goes
  const log = createLogger(command.name, Boolean(args.quiet), !command.server);
  // the gate's deadline, carried over: the gate is another bundle, and its Deadline would throw its own copy of
  // CairnError, which this bundle's errorKind does not know (a deadline there was a failure, not a run to keep)
  const deadline = passed
    ? new Deadline(passed.deadline.ms, passed.deadline.at)
    : command.server
      ? new Deadline(0)
      : deadlineFromEnv(command.deadlineMs, command.person);
  const output: string[] = [];
  let line: ProgressLine | undefined;
  const endProgress = () => line?.end();
  let store: Store | undefined;
  let location: Location | undefined;
  // a deferred run, started by `cairn rebuild` to apply it (lib/store/deferred.ts); a preview is never kept
  const deferrable = Boolean(command.deferrable && !args['dry-run']);
  let replay: DeferredRequest | undefined;
  const ctx: Context = {
    name: command.name,
    args,
    strict,
    deadline,
    log,
    print: (text) => output.push(text),
    // JSON escapes what a terminal would act on; a secret in a value read from an old log is redacted
    // here, for every command
    json: (value) => output.push(JSON.stringify(snakeCaseKeys(redactStrings(value))) + '\n'),
    stdin: () => stdinText(ctx, passed?.stdin),
    progress: (what, opts) => {
      endProgress();
      line = args.quiet ? undefined : progressLine(`cairn ${command.name}: ${what}`, opts);
      return line?.update ?? (() => {});
    },
    inputs: {},
    keepsRuns: deferrable,
    gate: passed,
    location: () => (location ??= locate(locationFlags(args))),
    store: (opts = {}) => {
      // a writer past its deadline still opens the store, to keep its run rather than lose it: its next check stops it (SPEC §2)
      if (!store && !deferrable) deadline.check('opening the store');
      const inOrder = deferrable && !replay;
      return (store ??= openStore({ ...locationFlags(args), payloadCwd: opts.payloadCwd ?? undefined }, deadline, log, strict, opts.create, inOrder));
    },
  };
  // A deadline that passes while waiting on I/O ends the run; synchronous work checks it at each phase.
  // A writer's only wait is its input (bounded by the reader): it reads that whole, then keeps its run
  // at the next check instead of being ended with nothing kept.
  const timer = Number.isFinite(deadline.at) && !deferrable
    ? setTimeout(() => {
        if (store?.committed) {
          // recorded: the run counts as done (SPEC §2: the append is the commit point); its product is dropped
          log.warn(`deadline of ${deadline.ms} ms passed after the change was recorded; nothing printed`);
          log.flush();
          process.exit(0);
        }
        process.exit(reportFailure(label, new CairnError('deadline', `deadline of ${deadline.ms} ms passed`), args, log));
      }, deadline.remaining())
    : undefined;
  timer?.unref();
  try {
    if (problem) throw new CairnError('usage', problem);
    if (process.env[DEFERRED_ENV]) {
      // only a writer's own kept run is run this way: a request names its command, and the file could be anyone's
      if (!deferrable) throw new CairnError('usage', `${command.name} is not a command whose runs are kept for later (${DEFERRED_ENV} is set)`);
      ctx.replayed = (replay = readRequest(process.env[DEFERRED_ENV])).inputs;
    }
    const code = await command.run(ctx);
    endProgress();
    if (deadline.passed()) {
      if (!store?.committed) throw new CairnError('deadline', `deadline of ${deadline.ms} ms passed`);
      log.warn(`finished past the deadline of ${deadline.ms} ms; the change is recorded`);
    }
    if (store) clearFailure(store.dir, command.name);
    log.flush();
    const text = output.join('');
    if (text) writeStdout(text);
    return typeof code === 'number' ? code : 0;
  } catch (err) {
    endProgress();
    // A corrupt page met mid-command: fail open now, and let the next run rebuild from the log.
    if (store && !strict && isCorruption(err)) store.quarantine(err);
    if (deferrable && store && !store.committed && isTransient(err)) {
      if (replay) {
        // Out of its own deadline: too long to apply in the background, set aside by the run that
        // started it (which records that). Else still not possible (a lock nobody releases, say): the
        // request stays for the next run of `cairn rebuild`, and the reason is recorded for cairn doctor.
        if (errorKind(err) === 'deadline') {
          log.end(`a kept run ran out of its ${deadline.ms} ms: ${describeError(err)}`);
          return DEFERRED_TOO_LONG;
        }
        const message = `a kept run is not applied yet: ${describeError(err)}`;
        log.end(message);
        recordFailure(store.dir, command.name, message);
        return DEFERRED_AGAIN;
      }
      const kept = keepForLater(store, { command: command.name, argv, cwd: process.cwd(), inputs: ctx.inputs }, log);
      if (kept) {
        // the run's one line: kept is not a failure (exit 0, under --strict too), and it is not done either
        log.end(`${describeError(err)}: this run is kept (cache/deferred/${kept.name}) and applied in order ${kept.applied}`);
        if (args.json) writeStdout(JSON.stringify({ deferred: kept.name }) + '\n');
        return 0;
      }
    }
    if (store?.committed) {
      // The change is in the log; the index catches up on the next run. Reporting a failure would make the caller retry and record it twice.
      log.warn(`${describeError(err)} (after the change was recorded; the next run catches up)`);
      log.flush();
      const text = output.join('');
      if (text) writeStdout(text);
      return 0;
    }
    return reportFailure(label, err, args, log);
  } finally {
    if (timer) clearTimeout(timer);
    store?.close();
  }
}

/**
 * A failure that a later run without a deadline would not meet: the index catching up, the deadline,
 * a lock held past it. A writer keeps its run for later on these; bad input, a broken store or a bug
 * would fail again, and fail open now.
 */
function isTransient(err: unknown): boolean {
  return err instanceof IndexCatchingUp || errorKind(err) === 'deadline' || errorKind(err) === 'lock';
}

/** Keep a writer's run for later (lib/store/deferred.ts); undefined when it cannot be kept (then the run fails open). */
function keepForLater(store: Store, request: DeferredRequest, log: Logger): Kept | undefined {
  try {
    return deferRequest(store, request);
  } catch (keepErr) {
    log.warn(`could not keep this run for later (${describeError(keepErr)})`);
    return undefined;
  }
}

/**
 * Every command's JSON reads alike (issue 10): `dryRun` → `dry_run`, at any depth. Only a camelCase
 * boundary changes a key, so data used as keys (types, roles, finding ids like `A4`) passes as it is.
 */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object') return value;
  const snake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, (_, before: string, upper: string) => `${before}_${upper.toLowerCase()}`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeCaseKeys(v)]));
}

function isStrict(args: minimist.ParsedArgs): boolean {
  return Boolean(args.strict) || process.env.CAIRN_STRICT === '1';
}

/** --root, --dir and --project as given (absent when empty): where `locate` starts. */
export function locationFlags(args: minimist.ParsedArgs) {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return { root: str(args.root), dir: str(args.dir), project: str(args.project) };
}

/**
 * The one place a failure becomes output and an exit code (SPEC §2): one stderr line (saying that
 * the pipeline continues when it does), a JSON error object on stdout under --json, and a line in
 * the store's health record so `cairn doctor` and auto-recall show it — usage errors included.
 */
function reportFailure(label: string, err: unknown, args: minimist.ParsedArgs, log?: Logger): number {
  // the message may quote what the command read: it reaches stderr, errors.log and the session start (SPEC §4.6)
  const message = sanitizeUntrusted(describeError(err), { singleLine: true });
  // stderr is written to just below; asking its stream spares every run loading tty at start-up
  const interactive = Boolean(process.stderr.isTTY);
  const code = exitCode(err, { strict: isStrict(args), interactive });
  const line = `${code === 0 ? 'skipped (pipeline continues): ' : ''}${message}`;
  if (log) log.end(line); // with the warnings that came before, in the one line (SPEC §2)
  else process.stderr.write(`${label}: ${line}\n`);
  if (!(err instanceof CairnError) && process.env.CAIRN_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  if (args.json) writeStdout(JSON.stringify({ error: message, kind: errorKind(err), exit_code: code }) + '\n');
  // A usage mistake at a terminal was seen by the person who made it; recorded, it would open every
  // agent session with "memory degraded" until someone cleared it. In a pipeline or hook nobody sees
  // stderr, so there it is recorded for `cairn doctor` and the auto-recall health line (SPEC §2).
  if (errorKind(err) === 'usage' && interactive) return code;
  let dir: string | undefined;
  try {
    dir = locate(locationFlags(args)).dir;
  } catch {
    dir = undefined;
  }
  recordFailure(dir, label.replace(/^cairn ?/, '') || 'cairn', message);
  return code;
}

/** The package's version, from the package.json above this module (the bundle and the tsc output sit at different depths). */
export function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 5; up++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'cairn' && pkg.version) return pkg.version;
    } catch {
      // not here: one level up
    }
  }
  return 'unknown';
}

function cairnUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([c, s]) => `  ${c.padEnd(width)}  ${s}`);
  return `usage: cairn <command> [flags]   (cairn <command> --help for its flags)\n\n${lines.join('\n')}\n\nEvery command fails open: errors go to stderr and exit 0; --strict or CAIRN_STRICT=1 exits non-zero instead.\nA usage error (unknown flag or command) exits 2 when stderr is a terminal. --version prints the version.\n`;
}
