import minimist from 'minimist';
import { CairnError, describeError, strictExitCode } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import { clearFailure, recordFailure } from '../store/health.js';
import { deadlineFromEnv, type Deadline } from '../core/deadline.js';
import { readStdin, DEFAULT_STDIN_CAP } from '../io/read.js';
import { openStore, type Store, type StoreOptions } from '../store/store.js';
import { isCorruption } from '../store/db.js';
import { locate } from '../store/root.js';

// The shared runner: every executable is a Command in scripts/<name>.ts. tools/bundle.js builds one
// file per command (dist/bin/<name>.js) so a hook starts by loading one module, not thirty.
// It parses flags, runs, and maps any error to the fail-open contract in one place (SPEC §2).

export interface FlagSpec {
  string?: string[];
  boolean?: string[];
  alias?: Record<string, string>;
}

export interface Command {
  name: string;
  /** Usage text for --help, with an example. */
  usage: string;
  flags: FlagSpec;
  /** Hooks and pipeline steps finish within CAIRN_DEADLINE_MS (default 2000); maintenance commands have no deadline by default. */
  deadlineMs: number;
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
  /** Stdin as text (capped; empty for a TTY). */
  stdin(): Promise<string>;
  /**
   * The project store, opened on first call. A hook passes its payload's cwd (SPEC §1.2: it comes
   * before $CLAUDE_PROJECT_DIR and the current directory); a writer may create the store.
   */
  store(opts?: StoreOptions): Store;
}

/** Flags every command accepts. */
const COMMON: Required<FlagSpec> = {
  string: ['root', 'dir', 'project'],
  boolean: ['strict', 'help', 'json', 'quiet'],
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
  doctor: 'check that cairn works here: modules, database, logs, errors, hooks',
};

/** An executable: run one command with its arguments; the exit code goes to process.exitCode. */
export async function main(command: Command, argv: string[]): Promise<void> {
  process.exitCode = await runCommand(command, argv);
}

/**
 * `cairn <name> …`: usage and unknown names here; a known name runs through `runNamed`, which loads
 * that command's own bundle and runs it there (one runner, one error class, per process path).
 */
export async function cairn(argv: string[], runNamed: (name: string, argv: string[]) => Promise<void>): Promise<void> {
  const sub = argv[0];
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(cairnUsage());
    return;
  }
  if (!(sub in COMMANDS)) {
    process.stderr.write(`cairn: unknown command '${sub}' (see cairn --help)\n`);
    process.exitCode = isStrict(argv) ? 2 : 0;
    return;
  }
  try {
    await runNamed(sub, argv.slice(1));
  } catch (err) {
    process.stderr.write(`cairn ${sub}: cannot load the command (${describeError(err)})\n`);
    process.exitCode = isStrict(argv) ? 1 : 0;
  }
}

function isStrict(argv: string[]): boolean {
  return argv.includes('--strict') || process.env.CAIRN_STRICT === '1';
}

export async function runCommand(command: Command, argv: string[]): Promise<number> {
  const spec = {
    string: [...COMMON.string, ...(command.flags.string ?? [])],
    boolean: [...COMMON.boolean, ...(command.flags.boolean ?? [])],
    alias: { ...COMMON.alias, ...(command.flags.alias ?? {}) },
  };
  const known = new Set([...spec.string, ...spec.boolean, ...Object.keys(spec.alias), ...Object.values(spec.alias)]);
  const unknown: string[] = [];
  const args = minimist(argv, {
    ...spec,
    unknown: (flag) => {
      if (flag.startsWith('-') && !known.has(flag.replace(/^--?(no-)?/, '').split('=')[0])) unknown.push(flag);
      return true;
    },
  });
  const strict = Boolean(args.strict) || process.env.CAIRN_STRICT === '1';
  const log = createLogger(command.name, Boolean(args.quiet));
  if (args.help) {
    process.stdout.write(command.usage.endsWith('\n') ? command.usage : command.usage + '\n');
    return 0;
  }
  const deadline = deadlineFromEnv(command.deadlineMs);
  const output: string[] = [];
  let store: Store | undefined;
  const ctx: Context = {
    name: command.name,
    args,
    strict,
    deadline,
    log,
    print: (text) => output.push(text),
    stdin: async () => {
      const cap = Number(process.env.CAIRN_STDIN_CAP) > 0 ? Number(process.env.CAIRN_STDIN_CAP) : DEFAULT_STDIN_CAP;
      const waitMs = Math.min(deadline.remaining(), 5000);
      const input = await readStdin(cap, waitMs);
      if (input.truncated) log.warn(`stdin exceeded ${cap} bytes; working on the first ${cap}`);
      if (input.timedOut) log.warn(`stdin was still open after ${waitMs} ms; working on the ${Buffer.byteLength(input.text)} bytes read`);
      return input.text;
    },
    store: (opts = {}) => (store ??= openStore({ ...locationFlags(args), payloadCwd: opts.payloadCwd ?? undefined }, deadline, log, strict, opts.create)),
  };
  // A deadline that passes while waiting on I/O ends the run fail-open; synchronous work checks it itself.
  const timer = Number.isFinite(deadline.at)
    ? setTimeout(() => {
        failOpen(command.name, new CairnError('deadline', `deadline of ${deadline.ms} ms passed`), args, strict);
        process.exit(strict ? 1 : 0);
      }, deadline.remaining())
    : undefined;
  timer?.unref();
  try {
    if (unknown.length) throw new CairnError('usage', `unknown flag ${unknown.join(', ')} (see --help)`);
    const code = await command.run(ctx);
    if (store) clearFailure(store.dir, command.name);
    const text = output.join('');
    if (text) process.stdout.write(text);
    return typeof code === 'number' ? code : 0;
  } catch (err) {
    // A corrupt page met mid-command: fail open now, and let the next run rebuild from the log.
    if (store && !strict && isCorruption(err)) store.quarantine(err);
    failOpen(command.name, err, args, strict);
    return strict ? strictExitCode(err) : 0;
  } finally {
    if (timer) clearTimeout(timer);
    store?.close();
  }
}

function locationFlags(args: minimist.ParsedArgs) {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return { root: str(args.root), dir: str(args.dir), project: str(args.project) };
}

function failOpen(name: string, err: unknown, args: minimist.ParsedArgs, strict: boolean): void {
  const message = describeError(err);
  process.stderr.write(`cairn ${name}: ${message}${strict ? '' : ' (continuing without it)'}\n`);
  if (!(err instanceof CairnError) && process.env.CAIRN_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  if (err instanceof CairnError && err.kind === 'usage') return;
  let dir: string | undefined;
  try {
    dir = locate(locationFlags(args)).dir;
  } catch {
    dir = undefined;
  }
  recordFailure(dir, name, message);
}

function cairnUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([c, s]) => `  ${c.padEnd(width)}  ${s}`);
  return `usage: cairn <command> [flags]   (cairn <command> --help for its flags)\n\n${lines.join('\n')}\n\nEvery command fails open: errors go to stderr and exit 0; --strict or CAIRN_STRICT=1 exits non-zero instead.\n`;
}
