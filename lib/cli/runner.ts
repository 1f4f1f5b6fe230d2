import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type minimist from 'minimist';
import { CairnError, describeError, errorKind } from '../core/errors.js';
import { classify, decide, lineText, type Outcome, type Situation } from './outcome.js';
import { createLogger, type Logger } from '../core/logger.js';
import { nearest } from '../core/suggest.js';
import { clearFailure, recordFailure } from '../store/health.js';
import { Deadline, deadlineFromEnv } from '../core/deadline.js';
import { openStore, type Store, type StoreOptions } from '../store/store.js';
import { locate, type Location } from '../store/root.js';
import { parseFlags, type FlagSpec } from './flags.js';
import { stdinText } from './input.js';
import type { BoundedInput } from '../io/read.js';
import type { BeadListing } from '../knowledge/beads.js';
import { writeStdout } from '../io/stdout.js';
import { redactStrings } from '../core/secrets.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { deferRequest, readRequest, type DeferredRequest, type Kept } from '../store/deferred.js';
import { DEFERRED_ENV } from '../core/deferred-env.js';
import type { Progress } from '../core/progress.js';
import { progressLine, type ProgressLine } from './progress.js';

// The runner every command shares, its phases in order (over 400 lines for that); outcome.ts decides (SPEC §2).

export type { FlagSpec } from './flags.js';

export interface Command {
  name: string;
  usage: string;
  flags: FlagSpec;
  operands?: boolean;
  /** CAIRN_DEADLINE_MS default: 2000 for hooks and pipeline steps, 0 (none) for maintenance. */
  deadlineMs: number;
  /** `cairn mcp`: CAIRN_DEADLINE_MS bounds each request, not the process. */
  server?: boolean;
  /** Without a deadline it waits under a second for a lock (Deadline.waitLimit). */
  person?: boolean;
  /** A writer: on a passing failure its run is kept and applied later (lib/store/deferred.ts). */
  deferrable?: boolean;
  run(ctx: Context): Promise<void | number> | void | number;
}

export interface Context {
  name: string;
  args: minimist.ParsedArgs;
  strict: boolean;
  deadline: Deadline;
  log: Logger;
  /** Reaches stdout only if the command succeeds. */
  print(text: string): void;
  json(value: unknown): void;
  stdin(): Promise<string>;
  progress(what: string, opts?: { bytes?: boolean }): Progress;
  /** The texts this run read, by flag: what a kept run is given again. */
  inputs: Record<string, string>;
  keepsRuns: boolean;
  replayed?: Record<string, string>;
  gate?: GatePassed;
  location(): Location;
  /** Opened on first call; a hook passes its payload's cwd (SPEC §1.2). */
  store(opts?: StoreOptions): Store;
}

const COMMON: Required<FlagSpec> = {
  string: ['root', 'dir', 'project'],
  list: [],
  boolean: ['strict', 'help', 'version', 'json', 'quiet'],
  alias: { h: 'help' },
};

/** Known without loading any command. */
export const COMMANDS: Record<string, string> = {
  'store-deliberation': 'store a deliberation and learn its patterns',
  'format-patterns': 'print the historical-patterns block for a role',
  'store-summary': "store a summary of a role's patterns for format-patterns",
  'feedback-loop': "apply a validator's verdict to the adversarial role's patterns",
  'outcome-score': 'grade the patterns injected in an issue/run by its result',
  rebuild: 'rebuild the database from .cairn/events.jsonl',
  events: 'read the event log',
  explain: "show a pattern's history and score factors",
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

export interface GatePassed {
  deadline: Deadline;
  stdin?: Promise<BoundedInput>;
  beads?: BeadListing;
}

export async function main(command: Command, argv: string[], passed?: GatePassed): Promise<void> {
  process.exitCode = await runCommand(command, argv, passed);
}

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
    process.exitCode = failBeforeRun('cairn', err, args);
    return;
  }
  try {
    await runNamed(sub, argv.slice(1));
  } catch (err) {
    process.exitCode = failBeforeRun(`cairn ${sub}`, new Error(`cannot load the command (${describeError(err)})`), args);
  }
}

export async function runCommand(command: Command, argv: string[], passed?: GatePassed): Promise<number> {
  const { args, problem } = parseFlags(flagSpec(command), argv, command.operands ?? false);
  if (args.help) {
    writeStdout(command.usage.endsWith('\n') ? command.usage : command.usage + '\n');
    return 0;
  }
  if (args.version) {
    writeStdout(`cairn ${version()}\n`);
    return 0;
  }
  const run = setUp(command, args, argv, passed);
  const timer = armDeadlineTimer(run);
  try {
    return conclude(run, await execute(run, problem));
  } finally {
    if (timer) clearTimeout(timer);
    run.state.store?.close();
  }
}

function flagSpec(command: Command): Required<FlagSpec> {
  return {
    string: [...COMMON.string, ...(command.flags.string ?? [])],
    list: [...COMMON.list, ...(command.flags.list ?? [])],
    boolean: [...COMMON.boolean, ...(command.flags.boolean ?? [])],
    alias: { ...COMMON.alias, ...(command.flags.alias ?? {}) },
  };
}

interface Run {
  command: Command;
  args: minimist.ParsedArgs;
  argv: string[];
  deadline: Deadline;
  log: Logger;
  ctx: Context;
  output: string[];
  deferrable: boolean;
  state: { store?: Store; location?: Location; replay?: DeferredRequest; progress?: ProgressLine };
}

function setUp(command: Command, args: minimist.ParsedArgs, argv: string[], passed?: GatePassed): Run {
  const strict = isStrict(args);
  // held for one line on a failure; a server prints as it goes
  const log = createLogger(command.name, Boolean(args.quiet), !command.server);
  // carried over: the gate is another bundle, whose CairnError this one's errorKind would not know
  const deadline = passed
    ? new Deadline(passed.deadline.ms, passed.deadline.at)
    : command.server
      ? new Deadline(0)
      : deadlineFromEnv(command.deadlineMs, command.person);
  const output: string[] = [];
  const state: Run['state'] = {};
  const deferrable = Boolean(command.deferrable && !args['dry-run']);
  const endProgress = () => state.progress?.end();
  const ctx: Context = {
    name: command.name,
    args,
    strict,
    deadline,
    log,
    print: (text) => output.push(text),
    // redacts a secret read from an old log, for every command
    json: (value) => output.push(JSON.stringify(snakeCaseKeys(redactStrings(value))) + '\n'),
    stdin: () => stdinText(ctx, passed?.stdin),
    progress: (what, opts) => {
      endProgress();
      state.progress = args.quiet ? undefined : progressLine(`cairn ${command.name}: ${what}`, opts);
      return state.progress?.update ?? (() => {});
    },
    inputs: {},
    keepsRuns: deferrable,
    gate: passed,
    location: () => (state.location ??= locate(locationFlags(args))),
    store: (opts = {}) => {
      // a writer past its deadline still opens the store to keep its run (SPEC §2)
      if (!state.store && !deferrable) deadline.check('opening the store');
      const inOrder = deferrable && !state.replay;
      const where = { ...locationFlags(args), payloadCwd: opts.payloadCwd ?? undefined };
      return (state.store ??= openStore(where, deadline, log, strict, opts.create, inOrder));
    },
  };
  return { command, args, argv, deadline, log, ctx, output, deferrable, state };
}

/** Ends the process when the deadline passes during a wait on I/O; writers keep their run at the next check instead. */
function armDeadlineTimer(run: Run): NodeJS.Timeout | undefined {
  if (!Number.isFinite(run.deadline.at) || run.deferrable) return undefined;
  const timer = setTimeout(() => process.exit(conclude(run, { ended: 'timed-out' })), run.deadline.remaining());
  timer.unref();
  return timer;
}

type End = { ended: 'finished'; returned?: number } | { ended: 'threw'; error: unknown } | { ended: 'timed-out' };

async function execute(run: Run, problem: string | undefined): Promise<End> {
  try {
    if (problem) throw new CairnError('usage', problem);
    if (process.env[DEFERRED_ENV]) {
      // only a writer's own kept run: the request file could be anyone's
      const name = run.command.name;
      if (!run.deferrable) throw new CairnError('usage', `${name} is not a command whose runs are kept for later (${DEFERRED_ENV} is set)`);
      run.ctx.replayed = (run.state.replay = readRequest(process.env[DEFERRED_ENV])).inputs;
    }
    const code = await run.command.run(run.ctx);
    return { ended: 'finished', returned: typeof code === 'number' ? code : undefined };
  } catch (error) {
    return { ended: 'threw', error };
  } finally {
    run.state.progress?.end();
  }
}

function conclude(run: Run, end: End): number {
  const { store, replay } = run.state;
  const committed = Boolean(store?.committed);
  const late = end.ended === 'finished' && run.deadline.passed();
  const pastDeadline = end.ended === 'timed-out' || (late && !committed);
  const error =
    end.ended === 'threw' ? end.error : pastDeadline ? new CairnError('deadline', `deadline of ${run.deadline.ms} ms passed`) : undefined;
  const situation = facts(run.args, {
    ended: end.ended,
    failure: error === undefined ? undefined : classify(error),
    late,
    returned: end.ended === 'finished' ? end.returned : undefined,
    committed,
    keepsRuns: run.deferrable && store !== undefined,
    replayed: replay !== undefined,
    hasStore: store !== undefined,
  });
  let outcome = decide(situation);
  if (outcome.quarantine) store?.quarantine(error);
  let kept: Kept | undefined;
  if (outcome.keep && store) {
    kept = keepForLater(store, { command: run.command.name, argv: run.argv, cwd: process.cwd(), inputs: run.ctx.inputs }, run.log);
    if (!kept) outcome = decide({ ...situation, keepsRuns: false });
  }
  const product = run.output.join('');
  writeOutcome(outcome, {
    label: `cairn ${run.command.name}`,
    args: run.args,
    error,
    deadlineMs: run.deadline.ms,
    kept,
    log: run.log,
    product,
    storeDir: store?.dir,
  });
  return outcome.exit;
}

function facts(args: minimist.ParsedArgs, rest: Omit<Situation, 'strict' | 'interactive' | 'json'>): Situation {
  return {
    ...rest,
    strict: isStrict(args),
    // touching process.stderr loads tty
    get interactive() {
      return Boolean(process.stderr.isTTY);
    },
    json: Boolean(args.json),
  };
}

function keepForLater(store: Store, request: DeferredRequest, log: Logger): Kept | undefined {
  try {
    return deferRequest(store, request);
  } catch (keepErr) {
    log.warn(`could not keep this run for later (${describeError(keepErr)})`);
    return undefined;
  }
}

interface Written {
  label: string;
  args: minimist.ParsedArgs;
  error: unknown;
  deadlineMs: number;
  kept?: Kept;
  log?: Logger;
  product?: string;
  storeDir?: string;
}

function writeOutcome(outcome: Outcome, w: Written): void {
  const failing = outcome.line === 'skipped' || outcome.line === 'failed';
  const raw = w.error === undefined ? '' : describeError(w.error);
  // it may quote what the command read (SPEC §4.6)
  const message = failing ? sanitizeUntrusted(raw, { singleLine: true }) : raw;
  const kept = w.kept && `(cache/deferred/${w.kept.name}) and applied in order ${w.kept.applied}`;
  const text = lineText(outcome.line, { message, deadlineMs: w.deadlineMs, kept });
  if (text === undefined) w.log?.flush();
  else if (outcome.line === 'late' || outcome.line === 'after-commit' || outcome.line === 'timed-out-after-commit') {
    w.log?.warn(text);
    w.log?.flush();
  } else if (w.log)
    w.log.end(text); // with the warnings before it, one line (SPEC §2)
  else process.stderr.write(`${w.label}: ${text}\n`);
  if (failing && !(w.error instanceof CairnError) && process.env.CAIRN_DEBUG) process.stderr.write(`${(w.error as Error)?.stack ?? ''}\n`);
  if (outcome.stdout === 'product' && w.product) writeStdout(w.product);
  if (outcome.stdout === 'deferred') writeStdout(JSON.stringify({ deferred: w.kept?.name }) + '\n');
  if (outcome.stdout === 'error') writeStdout(JSON.stringify({ error: message, kind: errorKind(w.error), exit_code: outcome.exit }) + '\n');
  const command = w.label.replace(/^cairn ?/, '') || 'cairn';
  if (outcome.health === 'clear' && w.storeDir) clearFailure(w.storeDir, command);
  // a failure goes where the flags say the store is (it may not open); a waiting kept run, in its store
  if (outcome.health === 'record') recordFailure(failing ? flaggedStoreDir(w.args) : w.storeDir, command, failing ? message : text!);
}

function flaggedStoreDir(args: minimist.ParsedArgs): string | undefined {
  try {
    return locate(locationFlags(args)).dir;
  } catch {
    return undefined;
  }
}

function failBeforeRun(label: string, error: unknown, args: minimist.ParsedArgs): number {
  const where = { committed: false, keepsRuns: false, replayed: false, hasStore: false };
  const outcome = decide(facts(args, { ended: 'threw', failure: classify(error), ...where }));
  writeOutcome(outcome, { label, args, error, deadlineMs: 0 });
  return outcome.exit;
}

/** Only a camelCase boundary changes a key, so data keys pass as they are. */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object') return value;
  const snake = (key: string) =>
    key.replace(/([a-z0-9])([A-Z])/g, (_, before: string, upper: string) => `${before}_${upper.toLowerCase()}`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeCaseKeys(v)]));
}

function isStrict(args: minimist.ParsedArgs): boolean {
  return Boolean(args.strict) || process.env.CAIRN_STRICT === '1';
}

export function locationFlags(args: minimist.ParsedArgs) {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return { root: str(args.root), dir: str(args.dir), project: str(args.project) };
}

/** Bundle and tsc output sit at different depths. */
export function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 5; up++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'cairn' && pkg.version) return pkg.version;
    } catch {
      // one level up
    }
  }
  return 'unknown';
}

function cairnUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([c, s]) => `  ${c.padEnd(width)}  ${s}`);
  return (
    `usage: cairn <command> [flags]   (cairn <command> --help for its flags)\n\n${lines.join('\n')}\n\nEvery ` +
    `command fails open: errors go to stderr and exit 0; --strict or CAIRN_STRICT=1 exits non-zero instead.\nA usage ` +
    `error (unknown flag or command) exits 2 when stderr is a terminal. --version prints the version.\n`
  );
}
