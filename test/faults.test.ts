import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  asIfApplyingKeptRuns,
  binPath,
  cleanEnv,
  corruptPatternsPage,
  FIXTURES,
  fixtureText,
  packageWithBrokenModules,
  removeProject,
  seededBytes,
  type RunResult,
} from './helpers.js';
import { Store } from '../lib/store/store.js';
import { locate } from '../lib/store/root.js';
import { Deadline } from '../lib/core/deadline.js';
import { createLogger } from '../lib/core/logger.js';
import { initStore, recordProjectId } from '../lib/store/init.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { captureComments } from '../lib/knowledge/capture.js';
import { listScored } from '../lib/patterns/lifecycle.js';
import { isCorruption } from '../lib/store/db.js';

// Fault injection (issue 7, "Done when"): every executable under each fault case. A row is an
// executable as a pipeline or a person calls it on a healthy project; a column is a way to break the
// project and what each executable must then do. A fault of the whole store runs every executable;
// a fault of one file runs the executables that touch it (its `only`, by their traits). After every
// run: the exit code, stdout and the stderr line, the log only grew by whole lines, and the index
// the next reader sees lists the same patterns as a fresh rebuild of the log (what `cairn list
// --json` and `cairn rebuild` show, computed in-process to keep the table fast).
// To extend: add the executable to EXECUTABLES (with its traits) or a fault to FAULTS.

const NOW = '2026-03-02T10:00:00.000Z';
const PROJECT = 'faultproject01';
const DEADLINE_MS = 300;
/** A run must end within its deadline plus this (process start, one uninterruptible phase, a loaded machine). */
const SLACK_MS = 3000;

interface Executable {
  /** `cairn <command>` unless it has its own bin. */
  command: string;
  args: string[];
  input?: string;
  /** Opens the index, cache/state.db. */
  db: boolean;
  /** Writes into the store (so a read-only store stops it). */
  writes: boolean;
  /** Takes a log's lock: it appends (the commit point) or rewrites under it. */
  locks: boolean;
  /** The first write creates a missing store (SPEC §1.2). */
  creates: boolean;
  /** Writes other files in cache/. */
  cache?: boolean;
  /** Writes or reads the deliberation texts in artifacts/. */
  artifacts?: boolean;
  /** A writer of memory: on a passing failure (a lock, the deadline) it keeps its run for later (lib/store/deferred.ts). */
  keeps?: boolean;
}

const OWN_BINS = new Set(['store-deliberation', 'format-patterns', 'feedback-loop', 'outcome-score', 'memory-capture', 'auto-recall']);
const SESSION_START = JSON.stringify({
  ...JSON.parse(readFileSync(join(FIXTURES, 'hooks', 'claude-session-start.json'), 'utf8')),
  cwd: '.',
});
let PATTERN = ''; // an auditor pattern of the template, known once it is built

const EXECUTABLES: Executable[] = [
  {
    command: 'store-deliberation',
    args: ['--role', 'auditor', '--issue', 'LED-102', '--run', 'r1'],
    input: fixtureText('led-102-r1-plan-auditor.md'),
    db: true,
    writes: true,
    locks: true,
    creates: true,
    artifacts: true,
    keeps: true,
  },
  {
    command: 'format-patterns',
    args: ['--role', 'auditor', '--issue', 'LED-102', '--run', 'r1'],
    db: true,
    writes: true,
    locks: true,
    creates: false,
  },
  {
    command: 'format-patterns',
    args: ['--role', 'auditor', '--strict'],
    db: true,
    writes: false,
    locks: false,
    creates: false,
  },
  {
    command: 'feedback-loop',
    args: ['--adversarial-role', 'auditor', '--validator-role', 'curator', '--issue', 'LED-101', '--run', 'r1'],
    db: true,
    writes: true,
    locks: true,
    creates: false,
    artifacts: true,
    keeps: true,
  },
  {
    command: 'outcome-score',
    args: ['--issue', 'LED-101', '--run', 'r1', '--result', 'fail'],
    db: true,
    writes: true,
    locks: true,
    creates: false,
    keeps: true,
  },
  {
    command: 'memory-capture',
    args: ['--bead', 'bd-7', '--text', 'LEARNED: retries against the primary need jitter'],
    db: false,
    writes: true,
    locks: true,
    creates: true,
    keeps: true,
  },
  {
    command: 'store-summary',
    args: ['--role', 'auditor'],
    input: 'Plans name their tests; flags are documented.\n',
    db: true,
    writes: true,
    locks: true,
    creates: false,
  },
  { command: 'rebuild', args: [], db: true, writes: false, locks: false, creates: false },
  { command: 'list', args: ['--json'], db: true, writes: false, locks: false, creates: false },
  { command: 'events', args: [], db: false, writes: false, locks: false, creates: false },
  { command: 'explain', args: ['<pattern>'], db: true, writes: false, locks: false, creates: false },
  {
    command: 'promote',
    args: ['<pattern>', '--by', 'ana', '--reason', 'keeps catching gaps'],
    db: true,
    writes: true,
    locks: true,
    creates: false,
  },
  {
    command: 'deprecate',
    args: ['<pattern>', '--reason', 'obsolete'],
    db: true,
    writes: true,
    locks: true,
    creates: false,
  },
  { command: 'maintain', args: [], db: true, writes: false, locks: false, creates: false },
  { command: 'embed', args: [], db: true, writes: false, locks: false, creates: false },
  { command: 'init', args: [], db: false, writes: false, locks: false, creates: true },
  // doctor opens the database as it is and reports what is wrong with it, instead of failing on it
  { command: 'doctor', args: [], db: false, writes: false, locks: false, creates: false },
  { command: 'patterns', args: [], db: false, writes: false, locks: false, creates: false },
  { command: 'auto-recall', args: [], input: SESSION_START, db: true, writes: false, locks: false, creates: false },
  { command: 'recall', args: ['ledger', 'totals'], db: true, writes: false, locks: false, creates: false },
  { command: 'rotate', args: [], db: false, writes: true, locks: true, creates: false },
  { command: 'sanitize', args: [], db: false, writes: true, locks: false, creates: false },
  { command: 'curate', args: ['--dry-run'], db: false, writes: true, locks: false, creates: false, cache: true },
  {
    command: 'patterns',
    args: ['capture', '--report', join(FIXTURES, 'landing', 'land-report.example.json')],
    db: false,
    writes: true,
    locks: true,
    creates: true,
  },
  // writes its page into cache/ (report.html)
  { command: 'report', args: [], db: true, writes: true, locks: false, creates: false, cache: true },
];

/** The commands that read the pattern event log (the others read the knowledge log or no log). */
const EVENT_LOG_READERS = [
  'store-deliberation',
  'format-patterns',
  'feedback-loop',
  'outcome-score',
  'store-summary',
  'rebuild',
  'list',
  'events',
  'explain',
  'promote',
  'deprecate',
  'maintain',
  'embed',
  'report',
];

/** The commands that read the knowledge log. */
const KNOWLEDGE_LOG_READERS = ['memory-capture', 'auto-recall', 'recall', 'rotate', 'sanitize', 'curate', 'report'];

const label = (e: Executable) => [e.command, ...e.args.filter((a) => !a.startsWith('-') || a === '--strict').slice(0, 2)].join(' ');

interface Outcome extends RunResult {
  ms: number;
}

interface Run {
  env?: Record<string, string>;
  /**
   * Send the input but never close stdin (a host that forgets to); or a pipe whose writer never
   * writes nor closes (`sleep 100 |`); or stdin from this file instead.
   */
  stdin?: 'left-open' | 'silent-pipe' | { file: string };
  /** Run as `nobody` (the store is then read-only to the process). */
  asNobody?: boolean;
  /** A package copy to run from (broken modules). */
  entryDir?: string;
}

/** Run an executable on a project, with a kill switch far beyond any deadline (a hang is a failure, not a stuck suite). */
function invoke(e: Executable, root: string, run: Run = {}): Promise<Outcome> {
  const own = OWN_BINS.has(e.command);
  const bin = own ? e.command : 'cairn';
  const args = [...(own ? [] : [e.command]), ...e.args.map((a) => (a === '<pattern>' ? PATTERN : a))];
  const entry = run.entryDir ? join(run.entryDir, 'bin', `${bin}.js`) : binPath(bin);
  const started = Date.now();
  return new Promise((resolve) => {
    const [stdinFd, writerFd] = stdinFds(root, run);
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: root,
      env: cleanEnv({ CAIRN_NOW: NOW, ...run.env }),
      stdio: [stdinFd ?? 'pipe', 'pipe', 'pipe'],
      ...(run.asNobody ? { uid: 65534, gid: 65534 } : {}),
    });
    if (stdinFd !== undefined) closeSync(stdinFd);
    const closeWriter = () => writerFd !== undefined && closeSync(writerFd);
    let stdout = '';
    let stderr = '';
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      clearTimeout(kill);
      closeWriter();
      child.stdin?.destroy();
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin?.on('error', () => undefined); // a command that never reads stdin may exit first
    if (run.stdin === 'left-open') child.stdin!.write(e.input ?? '');
    else child.stdin?.end(e.input ?? '');
  });
}

/** The stdin a run gets, when not the usual pipe: a file, or the read end of a FIFO whose write end we hold open. */
function stdinFds(root: string, run: Run): [number | undefined, number | undefined] {
  if (typeof run.stdin === 'object') return [openSync(run.stdin.file, 'r'), undefined];
  if (run.stdin !== 'silent-pipe') return [undefined, undefined];
  const fifo = join(root, 'stdin.fifo');
  spawnSync('mkfifo', [fifo]);
  const writer = openSync(fifo, constants.O_RDWR); // a writer that stays silent (Linux opens a FIFO read-write without waiting)
  return [openSync(fifo, 'r'), writer];
}

/** Run tasks two at a time (the machine has two cores). */
async function inPairs<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

let template: string;
const made: string[] = [];

/** A fresh copy of the template project (a git work tree with a populated store and a recorded id). */
function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'cairn-fault-'));
  made.push(root);
  cpSync(template, root, { recursive: true });
  // as if a background run were applying kept runs: a writer that keeps its run starts none here
  asIfApplyingKeptRuns(root);
  return root;
}

function openStore(root: string): Store {
  return new Store(locate({ root }), new Deadline(0), createLogger('faults', true), true);
}

beforeAll(() => {
  process.env.CAIRN_NOW = NOW;
  template = mkdtempSync(join(tmpdir(), 'cairn-fault-template-'));
  mkdirSync(join(template, '.git'));
  const dir = join(template, '.cairn');
  initStore(dir);
  recordProjectId({ root: template, dir, project: PROJECT, projectFrom: 'given', ownStore: true });
  const store = openStore(template);
  for (const [role, file] of [
    ['auditor', 'led-101-r1-plan-auditor.md'],
    ['curator', 'led-101-r1-plan-curator.md'],
  ]) {
    const stored = storeDeliberation(store, {
      text: fixtureText(file),
      role,
      issue: 'LED-101',
      run: 'r1',
      phase: 'plan',
      iteration: 1,
      labels: [],
      files: [],
    });
    if (role === 'auditor') PATTERN = stored.patterns[0].id;
  }
  captureComments(store, [{ bead: 'bd-1', text: 'LEARNED: the ledger totals are computed in cents', ts: 1_770_000_000, source: 'user' }]);
  store.close();
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ project: PROJECT, embeddings: { command: `node ${join(FIXTURES, 'embeddings', 'provider.js')}` } }, null, 2) + '\n',
  );
});

afterAll(() => {
  delete process.env.CAIRN_NOW;
  for (const dir of [template, ...made]) {
    chmodSync(dir, 0o700);
    removeProject(dir);
  }
});

/** What an executable must do under a fault: its normal work (warnings allowed), or fail open with a reason. */
type Expect = { ok: true; warning?: RegExp } | { skipped: RegExp } | { okOrSkipped: RegExp } | { kept: RegExp } | { keptOrSkipped: RegExp };

interface Fault {
  name: string;
  /** Only these executables are affected (the others are run too unless `only` says otherwise). */
  only?: (e: Executable) => boolean;
  /** Break a fresh project; returns how to run on it (an environment, a user, a package). */
  setup(root: string, e: Executable): Run | void | Promise<Run | void>;
  expect(e: Executable): Expect;
  /** Undo the fault before the log and index are checked (as a person would after reading the message). */
  repair?(root: string): void;
  /** A check of the fault's own victim (the file behind a link is untouched, …) and of what the run printed. */
  after?(root: string, e: Executable, o: Outcome): void;
}

let brokenSqlite: string;
let brokenTokenizer: string;
/** A live process that "holds" every lock written with its pid. */
let holder: ChildProcess;
const holdLock = (path: string) => writeFileSync(path, `${holder.pid} ${hostname()} ${Date.now()}\n`, { flag: 'wx' });

const inStore = (root: string, ...parts: string[]) => join(root, '.cairn', ...parts);
/** What a file outside the project holds: it must never reach an output or a committed file. */
const OUTSIDE = 'OUTSIDE-the-project-7f3a';
/** The locks of the logs and files that writers change. */
const LOCKS = ['events.jsonl.lock', 'memory/knowledge.jsonl.lock', 'landings.jsonl.lock'];
let deadPid: number;
const withDeadline: Run = { env: { CAIRN_DEADLINE_MS: String(DEADLINE_MS) } };
const lockers = (e: Executable) => e.locks;
/** A fault in cache/state.db reaches only the commands that open it (and doctor, which checks it). */
const databaseUsers = (e: Executable) => e.db || e.command === 'doctor';
const strictly = (e: Executable) => e.args.includes('--strict');
/**
 * Lock faults: the writer gives up at its deadline (or meets the deadline first), having recorded
 * nothing; a writer of memory keeps its run for later instead (the store then holds it).
 */
const lockedOut =
  (what: string) =>
  (e: Executable): Expect => {
    const reason = new RegExp(`lock .*\\.lock ${what}|deadline of ${DEADLINE_MS} ms passed`);
    return e.keeps ? { kept: reason } : { skipped: reason };
  };

const FAULTS: Fault[] = [
  {
    name: 'no store (a git work tree without .cairn/)',
    setup: (root) => rmSync(inStore(root), { recursive: true }),
    // the first write creates the store (SPEC §1.2, amended); readers never do
    // (doctor reports the missing store)
    expect: (e) =>
      e.creates || e.command === 'doctor' ? { ok: true } : { skipped: /no cairn store at .*\.cairn \(run `cairn init` in the project\)/ },
    after: (root, e) => expect(existsSync(inStore(root)), label(e)).toBe(e.creates),
  },
  {
    name: 'a read-only store',
    setup: (root) => {
      chmodSync(root, 0o755); // nobody may reach the store but not write it: root owns every file in it
      return { asNobody: true };
    },
    // pure reads are served from an index built in memory; writes fail at the store, before the commit point
    expect: (e) =>
      e.writes
        ? { skipped: /EACCES|permission denied/ }
        : e.command === 'rebuild'
          ? { skipped: /cannot rebuild .*state\.db: the store is read-only/ }
          : { ok: true },
  },
  {
    name: 'better-sqlite3 not loadable',
    setup: () => ({ entryDir: brokenSqlite }),
    expect: (e) => (e.db ? { skipped: /better-sqlite3 is not loadable \(Could not locate the bindings file/ } : { ok: true }),
  },
  {
    // tiktoken is WebAssembly: node --jitless and a ulimit -v under ~10 GB leave it unloadable too.
    // No hook loads it; maintain counts tokens for the cache and goes on without them.
    name: 'tiktoken not loadable',
    setup: () => ({ entryDir: brokenTokenizer }),
    expect: (e) => ({
      ok: true,
      warning: e.command === 'maintain' ? /no line's tokens counted: tiktoken is not loadable/ : undefined,
    }),
  },
  {
    name: 'state.db of random bytes',
    only: databaseUsers,
    setup: (root) => writeFileSync(inStore(root, 'cache', 'state.db'), seededBytes(64 * 1024, 7)),
    // (under --strict the broken file is the error, and it is left alone)
    expect: (e) =>
      strictly(e)
        ? { skipped: /state\.db is not a usable database/ }
        : {
            ok: true,
            warning: e.db
              ? /state\.db was not a usable database; moved it to .*state\.db\.corrupt-\d+ and rebuilt from the log/
              : undefined,
          },
  },
  {
    name: 'state.db with a corrupt page behind an intact header',
    only: databaseUsers,
    setup: (root) => void corruptPatternsPage(inStore(root, 'cache', 'state.db')),
    // a command that meets the page fails open once and moves the file aside; the next run rebuilds
    expect: (e) => (e.db ? { okOrSkipped: /database disk image is malformed/ } : { ok: true }),
  },
  {
    name: 'state.db is a directory',
    only: databaseUsers,
    setup: (root) => {
      rmSync(inStore(root, 'cache', 'state.db'));
      mkdirSync(inStore(root, 'cache', 'state.db'));
    },
    expect: (e) =>
      strictly(e)
        ? { skipped: /state\.db is a directory, not a database file/ }
        : { ok: true, warning: e.db ? /state\.db is a directory; moved it to .* and rebuilt from the log/ : undefined },
  },
  {
    name: 'state.db is a link to another SQLite file',
    only: databaseUsers,
    setup: (root) => {
      const other = new BetterSqlite3(join(root, 'other.db'));
      other.exec('CREATE TABLE mine (x); INSERT INTO mine VALUES (1)');
      other.close();
      rmSync(inStore(root, 'cache', 'state.db'));
      symlinkSync(join(root, 'other.db'), inStore(root, 'cache', 'state.db'));
    },
    expect: (e) =>
      strictly(e)
        ? { skipped: /state\.db is a symbolic link, not a database file/ }
        : {
            ok: true,
            warning: e.db ? /state\.db is a symbolic link; moved it to .* and rebuilt from the log/ : undefined,
          },
    after: (root) => {
      const other = new BetterSqlite3(join(root, 'other.db'), { readonly: true });
      const tables = (other.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
      other.close();
      expect(tables).toEqual(['mine']); // never cairn's tables in someone else's database
    },
  },
  {
    name: 'cache/ is a link out of the project',
    setup: (root) => {
      mkdirSync(join(root, 'outside'));
      rmSync(inStore(root, 'cache'), { recursive: true });
      symlinkSync(join(root, 'outside'), inStore(root, 'cache'));
    },
    // the index lives in cache/: nothing that needs it runs through the link (init would create it there)
    expect: (e) =>
      e.db || e.cache || e.command === 'init'
        ? { skipped: /\.cairn\/cache is a symbolic link; cairn never writes through one/ }
        : { ok: true },
    repair: (root) => rmSync(inStore(root, 'cache')),
    after: (root) => expect(readdirSync(join(root, 'outside'))).toEqual([]),
  },
  {
    name: 'artifacts/ is a link out of the project',
    only: (e) => !!e.artifacts,
    setup: (root) => {
      cpSync(inStore(root, 'artifacts'), join(root, 'outside'), { recursive: true });
      rmSync(inStore(root, 'artifacts'), { recursive: true });
      symlinkSync(join(root, 'outside'), inStore(root, 'artifacts'));
    },
    expect: (e) =>
      e.command === 'store-deliberation'
        ? { skipped: /\.cairn\/artifacts is a symbolic link; cairn never writes through one/ }
        : { ok: true },
    after: (root) => expect(readdirSync(join(root, 'outside', 'deliberations'))).toHaveLength(2),
  },
  {
    name: 'events.jsonl committed as a link to /dev/zero',
    setup: (root) => {
      rmSync(inStore(root, 'events.jsonl'));
      symlinkSync('/dev/zero', inStore(root, 'events.jsonl'));
      rmSync(inStore(root, 'cache'), { recursive: true }); // a fresh clone: the index is built from the log
    },
    // every reader of the event log refuses it at once (it would read without end); the knowledge side goes
    // on; a landing is recorded in its own log, and only its note in the event log is refused
    expect: (e) => linkedEventLog(e, /events\.jsonl is not a regular file/),
    repair: (root) => rmSync(inStore(root, 'events.jsonl')),
  },
  {
    name: 'memory/knowledge.jsonl committed as a link to /dev/zero',
    setup: (root) => {
      rmSync(inStore(root, 'memory', 'knowledge.jsonl'));
      symlinkSync('/dev/zero', inStore(root, 'memory', 'knowledge.jsonl'));
      rmSync(inStore(root, 'cache'), { recursive: true });
    },
    // a capture's append meets the link first; every reader refuses it at once
    expect: (e) =>
      KNOWLEDGE_LOG_READERS.includes(e.command)
        ? {
            skipped: /knowledge\.jsonl(: it is a symbolic link; cairn never writes through one| is not a regular file)/,
          }
        : { ok: true },
    repair: (root) => rmSync(inStore(root, 'memory', 'knowledge.jsonl')),
  },
  {
    // a clone can bring a committed log as a link to any JSONL file of the machine
    name: 'events.jsonl committed as a link to a JSONL log outside the project',
    setup: (root) => {
      mkdirSync(join(root, 'outside'));
      const planted = {
        v: 1,
        id: '01ZZZZZZZZZZZZZZZZZZZZZZZZ',
        ts: NOW,
        type: 'pattern.observed',
        project: PROJECT,
        pattern: 'p0ut51de0000001',
        role: 'auditor',
        text: `${OUTSIDE}: plans must name their tests`,
        category: 'rule',
        issue: 'LED-1',
        run: 'r1',
        phase: null,
        labels: [],
        files: [],
        deliberation: 'd0ut51de',
      };
      writeFileSync(
        join(root, 'outside', 'events.jsonl'),
        readFileSync(inStore(root, 'events.jsonl'), 'utf8') + JSON.stringify(planted) + '\n',
      );
      rmSync(inStore(root, 'events.jsonl'));
      symlinkSync(join(root, 'outside', 'events.jsonl'), inStore(root, 'events.jsonl'));
      rmSync(inStore(root, 'cache'), { recursive: true }); // a fresh clone: the index is built from the log
      asIfApplyingKeptRuns(root);
    },
    // never read through the link: every reader of the event log refuses it and says why
    expect: (e) => linkedEventLog(e, /events\.jsonl is not a regular file but a symbolic link; cairn reads no log through one/),
    repair: (root) => rmSync(inStore(root, 'events.jsonl')),
    after: (root, e, o) => {
      expect(o.stdout, label(e)).not.toContain('OUTSIDE');
      expect(readFileSync(join(root, 'outside', 'events.jsonl'), 'utf8')).toContain(OUTSIDE); // never written either
    },
  },
  {
    name: 'memory/knowledge.jsonl committed as a link to a JSONL log outside the project',
    setup: (root) => {
      mkdirSync(join(root, 'outside'));
      const planted = {
        key: 'learned-outside',
        type: 'learned',
        content: `${OUTSIDE} the ledger totals`,
        source: 'user',
        tags: ['learned'],
        ts: 1_770_000_000,
        bead: 'bd-9',
      };
      writeFileSync(
        join(root, 'outside', 'knowledge.jsonl'),
        readFileSync(inStore(root, 'memory', 'knowledge.jsonl'), 'utf8') + JSON.stringify(planted) + '\n',
      );
      rmSync(inStore(root, 'memory', 'knowledge.jsonl'));
      symlinkSync(join(root, 'outside', 'knowledge.jsonl'), inStore(root, 'memory', 'knowledge.jsonl'));
      rmSync(inStore(root, 'cache'), { recursive: true });
      asIfApplyingKeptRuns(root);
    },
    expect: (e) =>
      KNOWLEDGE_LOG_READERS.includes(e.command)
        ? {
            skipped:
              /knowledge\.jsonl(: it is a symbolic link; cairn never writes through one| is not a regular file but a symbolic link; cairn reads no log through one)/,
          }
        : { ok: true },
    repair: (root) => rmSync(inStore(root, 'memory', 'knowledge.jsonl')),
    after: (root, e, o) => {
      expect(o.stdout, label(e)).not.toContain('OUTSIDE');
      expect(
        readFileSync(join(root, 'outside', 'knowledge.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean),
      ).toHaveLength(2);
    },
  },
  {
    name: 'the rotation journal is a link to a file outside the project',
    only: (e) => ['rotate', 'memory-capture'].includes(e.command),
    setup: (root) => {
      mkdirSync(join(root, 'outside'));
      writeFileSync(join(root, 'outside', 'secrets.jsonl'), `{"inode":1}\n{"key":"x","type":"fact","content":"${OUTSIDE}"}\n`);
      symlinkSync(join(root, 'outside', 'secrets.jsonl'), inStore(root, 'memory', 'knowledge.jsonl.rotating.tmp'));
    },
    // reported, and nothing of the file behind it reaches the committed archive; a capture still captures
    expect: (e) =>
      e.command === 'rotate'
        ? {
            skipped: /knowledge\.jsonl\.rotating\.tmp is not a regular file but a symbolic link; cairn reads no log through one/,
          }
        : {
            ok: true,
            warning: /captured; rotation is left to the next run \(.*rotating\.tmp is not a regular file but a symbolic link/,
          },
    after: (root) => {
      const archive = inStore(root, 'memory', 'knowledge.archive.jsonl');
      expect(existsSync(archive) ? readFileSync(archive, 'utf8') : '').not.toContain(OUTSIDE);
      expect(readFileSync(join(root, 'outside', 'secrets.jsonl'), 'utf8')).toContain(OUTSIDE);
    },
  },
  {
    name: 'a stored deliberation replaced by a link to /dev/zero',
    only: (e) => !!e.artifacts,
    setup: (root) => {
      for (const file of readdirSync(inStore(root, 'artifacts', 'deliberations'))) {
        rmSync(inStore(root, 'artifacts', 'deliberations', file));
        symlinkSync('/dev/zero', inStore(root, 'artifacts', 'deliberations', file));
      }
    },
    // read as any input is: a device is refused at once instead of read without end
    expect: (e) =>
      e.command === 'feedback-loop'
        ? {
            skipped: /the stored curator deliberation d\w+ is unreadable|deliberations\/d\w+\.md is not a regular file/,
          }
        : { ok: true },
  },
  {
    name: '.cairn/.gitignore is a link to a secret',
    only: (e) => e.command === 'init', // the one command that edits it
    setup: (root) => {
      writeFileSync(join(root, 'secret.txt'), 'AWS_SECRET=abc123\n');
      rmSync(inStore(root, '.gitignore'));
      symlinkSync(join(root, 'secret.txt'), inStore(root, '.gitignore'));
    },
    expect: (e) =>
      e.command === 'init' ? { skipped: /\.cairn\/\.gitignore is a symbolic link; cairn never writes through one/ } : { ok: true },
    after: (root) => {
      expect(readFileSync(join(root, 'secret.txt'), 'utf8')).toBe('AWS_SECRET=abc123\n');
      expect(lstatSync(inStore(root, '.gitignore')).isSymbolicLink()).toBe(true); // never replaced by a copy of the secret
    },
  },
  {
    name: 'the lock held by a live process',
    only: lockers,
    setup: (root) => {
      for (const lock of LOCKS) holdLock(inStore(root, lock));
      return withDeadline;
    },
    expect: lockedOut('is held by another process \\(pid \\d+ on '),
    after: (root) => {
      for (const lock of LOCKS) expect(readFileSync(inStore(root, lock), 'utf8')).toMatch(new RegExp(`^${holder.pid} `)); // never stolen from a live holder
    },
  },
  {
    name: 'a stale lock left by a dead process',
    only: lockers,
    setup: (root) => {
      for (const lock of LOCKS) writeFileSync(inStore(root, lock), `${deadPid} ${hostname()} ${Date.now()}\n`);
      return { env: { CAIRN_DEADLINE_MS: '5000' } };
    },
    expect: () => ({ ok: true }), // the writer breaks the lock it needs and succeeds
  },
  {
    name: 'the lock path is a directory (the shell idiom `mkdir x.lock`)',
    only: lockers,
    setup: (root) => {
      for (const lock of LOCKS) mkdirSync(inStore(root, lock));
      return withDeadline;
    },
    expect: lockedOut('is a directory, not a cairn lock'),
  },
  {
    name: 'the lock path is a dangling link',
    only: lockers,
    setup: (root) => {
      for (const lock of LOCKS) symlinkSync(join(root, 'nowhere'), inStore(root, lock));
      return withDeadline;
    },
    expect: lockedOut('is a symbolic link, not a cairn lock'),
    after: (root) => expect(existsSync(join(root, 'nowhere'))).toBe(false),
  },
  {
    name: 'a deadline of 1 ms',
    setup: () => ({ env: { CAIRN_DEADLINE_MS: '1' } }),
    // a writer reads its whole input and keeps its run with it, however short its deadline
    expect: (e) => (e.keeps ? { kept: /deadline of 1 ms passed/ } : { skipped: /deadline of 1 ms passed/ }),
  },
];

/** The bytes of the logs, to check afterwards that they only grew by whole lines (a log that is not a regular file is the fault itself: not read). */
function logsOf(root: string): Map<string, string> {
  const logs = new Map<string, string>();
  for (const log of ['events.jsonl', 'memory/knowledge.jsonl']) {
    const path = inStore(root, log);
    if (!existsSync(path)) logs.set(log, '');
    else if (lstatSync(path).isFile()) logs.set(log, readFileSync(path, 'utf8'));
  }
  return logs;
}

/** What `cairn list --json` is built from, as the next reader sees it (a non-strict store heals as a run would). */
function listed(root: string): unknown {
  const store = new Store(locate({ root }), new Deadline(0), createLogger('faults', true), false);
  const list = () => listScored(store, { roles: [], states: [], regressions: false });
  try {
    return list();
  } catch (err) {
    if (!isCorruption(err)) throw err;
    store.quarantine(err); // what the runner does when a command meets a corrupt page
    return list();
  } finally {
    store.close();
  }
}

const rebuilt = new Map<string, unknown>();

/** The same, from an index rebuilt afresh from the log alone (the same log gives the same list: kept per log). */
function listedFromFreshRebuild(root: string): unknown {
  const log = existsSync(inStore(root, 'events.jsonl')) ? readFileSync(inStore(root, 'events.jsonl'), 'utf8') : '';
  if (!rebuilt.has(log)) rebuilt.set(log, rebuildAndList(root));
  return rebuilt.get(log);
}

function rebuildAndList(root: string): unknown {
  const copy = mkdtempSync(join(tmpdir(), 'cairn-fault-rebuild-'));
  try {
    cpSync(inStore(root), join(copy, '.cairn'), {
      recursive: true,
      filter: (src) => !src.includes(`${join('.cairn', 'cache')}`),
    });
    return listed(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** After any run: the logs are the old bytes plus whole JSON lines, and the index equals a fresh rebuild. */
function expectStoreIntact(root: string, before: Map<string, string>): void {
  if (!existsSync(inStore(root))) return;
  for (const [log, old] of before) {
    const now = existsSync(inStore(root, log)) ? readFileSync(inStore(root, log), 'utf8') : '';
    expect(now.startsWith(old), `${root}: ${log} was rewritten`).toBe(true);
    const added = now.slice(old.length);
    if (added) {
      expect(added.endsWith('\n'), `${log} ends in a torn line`).toBe(true);
      for (const line of added.trimEnd().split('\n')) expect(() => JSON.parse(line), `${log}: ${line}`).not.toThrow();
    }
  }
  expect(listed(root)).toEqual(listedFromFreshRebuild(root));
}

/**
 * Exit code, stdout and the stderr line of one run against what the fault expects: a failure is one
 * `cairn <name>: skipped (pipeline continues): <reason>` line — exactly one, whatever was said before
 * it — exit 0 and no product (under --json, the error object); under --strict it is
 * `cairn <name>: <reason>` and exit 1. A run kept for later is one line too.
 */
function expectOutcome(e: Executable, o: Outcome, expected: Expect): void {
  const name = `cairn ${e.command}`;
  const strict = e.args.includes('--strict');
  const about = `${label(e)} (exit ${o.code}): ${o.stderr}`;
  const lines = o.stderr.trimEnd().split('\n').filter(Boolean);
  for (const line of lines) expect(line.startsWith(`${name}: `), about).toBe(true);
  const failed = strict ? o.code !== 0 : lines.some((l) => l.startsWith(`${name}: skipped (pipeline continues): `));
  const kept = lines.at(-1)?.includes(': this run is kept (cache/deferred/') ?? false;
  if ('kept' in expected || ('keptOrSkipped' in expected && kept)) {
    const reason = 'kept' in expected ? expected.kept : expected.keptOrSkipped;
    expect(o.code, about).toBe(0); // not a failure, under --strict too: applied later
    expect(kept, about).toBe(true);
    expect(lines, about).toHaveLength(1); // one line, whatever was said before it (SPEC §2)
    expect(lines.at(-1), about).toMatch(reason);
    if (e.args.includes('--json')) expect(JSON.parse(o.stdout), about).toEqual({ deferred: expect.any(String) });
    else expect(o.stdout, about).toBe('');
    return;
  }
  if ('keptOrSkipped' in expected) expected = { skipped: expected.keptOrSkipped };
  if ('skipped' in expected || ('okOrSkipped' in expected && failed)) {
    const reason = 'skipped' in expected ? expected.skipped : (expected as { okOrSkipped: RegExp }).okOrSkipped;
    expect(o.code, about).toBe(strict ? 1 : 0);
    expect(lines, about).toHaveLength(1); // a failure is one line, with the warnings before it folded in (SPEC §2)
    const last = lines.at(-1) ?? '';
    expect(last.startsWith(strict ? `${name}: ` : `${name}: skipped (pipeline continues): `), about).toBe(true);
    expect(last, about).toMatch(reason);
    if (e.args.includes('--json')) expect(JSON.parse(o.stdout), about).toMatchObject({ kind: expect.any(String), exit_code: o.code });
    else expect(o.stdout, about).toBe('');
    return;
  }
  expect(e.command === 'doctor' ? [0, 1] : [0], about).toContain(o.code); // doctor exits 1 when one of its checks fails
  expect(failed, about).toBe(false);
  if ('ok' in expected && expected.warning) expect(o.stderr, about).toMatch(expected.warning);
}

/** A linked event log: a landing is recorded in its own log (its note in the event log refused), every reader of
 * the event log refuses it with `refusal`, the knowledge side goes on. */
function linkedEventLog(e: Executable, refusal: RegExp): Expect {
  if (e.command === 'patterns' && e.args[0] === 'capture') {
    return {
      ok: true,
      warning: /cannot append to .*events\.jsonl: it is a symbolic link; cairn never writes through one \(after the change was recorded/,
    };
  }
  return EVENT_LOG_READERS.includes(e.command) ? { skipped: refusal } : { ok: true };
}

describe('every executable under every fault', () => {
  beforeAll(async () => {
    brokenSqlite = packageWithBrokenModules(['better-sqlite3']);
    brokenTokenizer = packageWithBrokenModules(['tiktoken']);
    made.push(brokenSqlite, brokenTokenizer);
    holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { stdio: 'ignore' });
    const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    deadPid = await new Promise((resolve) => dead.on('exit', () => resolve(dead.pid!)));
  });
  afterAll(() => {
    holder.kill();
  });

  it.each(FAULTS.map((f) => [f.name, f] as const))('%s', async (_name, fault) => {
    await inPairs(
      EXECUTABLES.filter((e) => !fault.only || fault.only(e)).map((e) => async () => {
        const root = project();
        const run = (await fault.setup(root, e)) ?? {};
        const before = logsOf(root);
        const outcome = await invoke(e, root, run);
        const deadline = Number(run.env?.CAIRN_DEADLINE_MS);
        if (deadline > 0) expect(outcome.ms, `${label(e)} ran ${outcome.ms} ms`).toBeLessThan(deadline + SLACK_MS);
        expectOutcome(e, outcome, fault.expect(e));
        fault.after?.(root, e, outcome);
        fault.repair?.(root);
        expectStoreIntact(root, before);
      }),
    );
  });
});

// Input from flags and stdin (SPEC §2): every read is bounded in bytes and in time, whatever the
// path names — a device that never ends, a FIFO without a writer, a pipe left open — and a
// relative path stays inside the project.

const REPORT = readFileSync(join(FIXTURES, 'landing', 'land-report.example.json'), 'utf8');
const INPUT_DEADLINE_MS = 2000; // the default hook deadline: half of it may go to waiting on input

interface InputReader {
  executable: Executable;
  /** The flag that names a file for it, if any. */
  fileFlag?: string;
  /** What it does with an input that ends empty. */
  empty: Expect;
}

const reader = (command: string, args: string[], input: string, empty: Expect, fileFlag?: string): InputReader => ({
  executable: { command, args, input, db: false, writes: true, locks: true, creates: false },
  fileFlag,
  empty,
});

const INPUT_READERS: InputReader[] = [
  reader(
    'store-deliberation',
    ['--role', 'auditor', '--issue', 'LED-102', '--run', 'r1'],
    fixtureText('led-102-r1-plan-auditor.md'),
    { skipped: /the deliberation is empty/ },
    'file',
  ),
  reader(
    'feedback-loop',
    ['--adversarial-role', 'auditor', '--validator-role', 'curator', '--issue', 'LED-101', '--run', 'r1'],
    fixtureText('led-101-r1-plan-curator.md'),
    { ok: true, warning: /no valid verdict-json block: nothing to do/ },
    'validator-file',
  ),
  reader('outcome-score', ['--issue', 'LED-101', '--run', 'r1', '--result', 'pass'], REPORT, { ok: true }, 'report'),
  reader('patterns', ['capture'], REPORT, { skipped: /the landing report is not JSON|no landing report: give --report F/ }, 'report'),
  // (half its deadline went to the wait: on a loaded machine the ranking may not fit the other half, and then it prints nothing)
  reader(
    'format-patterns',
    ['--role', 'auditor'],
    'every CLI flag and its man page',
    { okOrSkipped: /deadline of \d+ ms passed/ },
    'query-file',
  ),
  reader('store-summary', ['--role', 'auditor'], 'Plans name their tests; flags are documented.\n', {
    skipped: /no summary text on stdin/,
  }),
  // a PostToolUse payload whose cwd is the project the hook runs in
  reader(
    'memory-capture',
    [],
    JSON.stringify({
      ...JSON.parse(readFileSync(join(FIXTURES, 'hooks', 'claude-post-tool-use-bash.json'), 'utf8')),
      cwd: '.',
    }),
    { ok: true },
  ),
];

/** `--flag source` instead of the input on stdin. */
const fromFile = (r: InputReader, source: string): Executable => ({
  ...r.executable,
  args: [...r.executable.args, `--${r.fileFlag}`, source],
  input: '',
});

interface InputFault {
  name: string;
  /** The path to name, made in the project when needed. */
  source(root: string): string;
  expect(r: InputReader): Expect;
}

const INPUT_FAULTS: InputFault[] = [
  {
    name: '/dev/zero (never ends)',
    source: () => '/dev/zero',
    expect: () => ({ skipped: /holds binary data \(a NUL byte\), not text/ }),
  },
  {
    name: '/dev/urandom',
    source: () => '/dev/urandom',
    expect: () => ({ skipped: /holds binary data|is not valid UTF-8 text/ }),
  },
  {
    name: 'a FIFO without a writer',
    source: (root) => {
      spawnSync('mkfifo', [join(root, 'fifo')]);
      return 'fifo';
    },
    expect: (r) => r.empty,
  },
  {
    name: 'a directory',
    source: () => '.git',
    expect: () => ({ skipped: /cannot read --[\w-]+ \.git: it is a directory/ }),
  },
  {
    name: 'a relative path out of the project',
    source: () => '../../../etc/passwd',
    expect: () => ({ skipped: /leads outside the project root/ }),
  },
  // `sleep 100 | store-deliberation --file /dev/stdin`: the wait ends at half the deadline
  { name: '/dev/stdin, a pipe whose writer stays silent', source: () => '/dev/stdin', expect: (r) => r.empty },
];

describe('every input reader under every input fault', () => {
  const withFile = INPUT_READERS.filter((r) => r.fileFlag);
  it.each(INPUT_FAULTS.map((f) => [f.name, f] as const))('%s', async (_name, fault) => {
    await inPairs(
      withFile.map((r) => async () => {
        const root = project();
        const source = fault.source(root);
        const e = fromFile(r, source);
        const before = logsOf(root);
        const outcome = await invoke(e, root, {
          env: { CAIRN_DEADLINE_MS: String(INPUT_DEADLINE_MS) },
          ...(source === '/dev/stdin' ? { stdin: 'silent-pipe' } : {}),
        });
        expect(outcome.ms, `${label(e)} ran ${outcome.ms} ms`).toBeLessThan(INPUT_DEADLINE_MS + SLACK_MS);
        expectOutcome(e, outcome, fault.expect(r));
        expectStoreIntact(root, before);
      }),
    );
  });

  it('stdin left open after the text: every stdin reader works on what arrived, within its deadline', async () => {
    await inPairs(
      INPUT_READERS.filter((r) => r.executable.command !== 'format-patterns').map((r) => async () => {
        const root = project();
        const before = logsOf(root);
        const outcome = await invoke(r.executable, root, {
          env: { CAIRN_DEADLINE_MS: String(INPUT_DEADLINE_MS) },
          stdin: 'left-open',
        });
        expect(outcome.ms).toBeLessThan(INPUT_DEADLINE_MS + SLACK_MS);
        expectOutcome(r.executable, outcome, {
          ok: true,
          warning: /stdin was still open after \d+ ms; working on the \d+ bytes read/,
        });
        expect(logsOf(root), label(r.executable)).not.toEqual(before); // what arrived was recorded
        expectStoreIntact(root, before);
      }),
    );
  });

  it('stdin from /dev/zero: cut at the cap while reading, then refused as binary', async () => {
    await inPairs(
      INPUT_READERS.filter((r) => r.executable.command !== 'format-patterns').map((r) => async () => {
        const outcome = await invoke(r.executable, project(), {
          env: { CAIRN_DEADLINE_MS: String(INPUT_DEADLINE_MS) },
          stdin: { file: '/dev/zero' },
        });
        expect(outcome.stderr).toContain(`stdin exceeded ${8 * 1024 * 1024} bytes; working on the first ${8 * 1024 * 1024}`);
        expectOutcome(r.executable, outcome, { skipped: /stdin holds binary data/ });
      }),
    );
  });
});
