import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  mkdtempSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, expect } from 'vitest';
import { Store } from '../lib/store/store.js';
import { locate } from '../lib/store/root.js';
import { Deadline } from '../lib/core/deadline.js';
import { createLogger } from '../lib/core/logger.js';
import { initStore } from '../lib/store/init.js';
import { codexEventLabel, codexHookHash } from '../lib/hosts/codex-trust.js';
import { placedHandlers } from '../lib/hosts/settings.js';
import { patternId } from '../lib/core/ids.js';
import { appendEvents } from '../lib/events/log.js';
import type { EventPayload } from '../lib/events/types.js';
import type { KnowledgeHit } from '../lib/knowledge/index.js';
// @ts-expect-error: the benchmark's store writer is plain JavaScript (it writes cairn's event format directly)
import { PROJECT as BENCH_PROJECT, writeEventLog } from '../bench/stores.js';
// @ts-expect-error: the benchmark's text generator is plain JavaScript
import { deliberationText, patternTexts } from '../bench/corpus.js';

// Shared test helpers: temporary projects, the executables run as processes, fixtures.

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const FIXTURES = join(REPO, 'fixtures');

export function binPath(name: string): string {
  return join(REPO, 'bin', `${name}.js`);
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** A temporary directory, removed after the test. */
export function tempDir(prefix = 'cairn-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => removeProject(dir));
  return dir;
}

/** A temporary project directory (with `.git/` so it is a root), removed after the test. */
export function tempProject(opts: { init?: boolean } = {}): string {
  const dir = tempDir();
  mkdirSync(join(dir, '.git'));
  if (opts.init !== false) initStore(join(dir, '.cairn'));
  return dir;
}

/** The pids of the processes whose arguments name `dir` or a path inside it (Linux's /proc; none elsewhere). */
export function processesIn(dir: string): number[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
  const inside = (arg: string) => arg === dir || arg.startsWith(dir + '/');
  return pids.map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some(inside);
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** Whether a process still runs (a zombie waiting for its parent to reap it does not). */
const running = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/**
 * Remove a test project. A command may have left a detached cairn working there (a sanitiser waiting
 * out its interval, a kept run's replay) that would recreate files while they are removed: it is
 * ended first, then the directory removed (retried, for one that starts meanwhile).
 */
export function removeProject(dir: string): void {
  const pids = processesIn(dir);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const until = Date.now() + 5000;
  while (pids.some(running) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  /** Extra node arguments / a different entry (e.g. a copied bin). */
  entry?: string;
}

/** The environment a test process gets: this one without any CAIRN_* settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CAIRN_') && k !== 'CLAUDE_PROJECT_DIR') env[k] = v;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Run an executable (`store-deliberation`, `cairn`, …) as a process: stdin in, stdout/stderr/exit code out. */
export function run(name: string, args: string[], opts: RunOptions): RunResult {
  const r = spawnSync(process.execPath, [opts.entry ?? binPath(name), ...args], {
    cwd: opts.cwd,
    input: opts.input ?? '',
    env: cleanEnv(opts.env),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without waiting: for concurrency tests. */
export function runAsync(name: string, args: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [opts.entry ?? binPath(name), ...args], {
      cwd: opts.cwd,
      env: cleanEnv(opts.env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** A Store opened in-process (strict, no deadline) for library-level tests. */
export function openTestStore(root: string, project?: string): Store {
  const store = new Store(locate({ root, project }), new Deadline(0), createLogger('test', true), true);
  cleanups.push(() => store.close());
  return store;
}

export interface DeliberationFixture {
  file: string;
  role: string;
  issue: string;
  run: string;
  phase: 'plan' | 'review' | 'qa';
  iteration: number;
  files: string[];
  labels: string[];
  evidence: 'L1' | 'L2' | 'L3';
  verdict: 'PASS' | 'FAIL';
  false_positives: string[];
  notes: string;
}

export function deliberationFixtures(): DeliberationFixture[] {
  return JSON.parse(readFileSync(join(FIXTURES, 'deliberations', 'index.json'), 'utf8'));
}

export function fixtureText(file: string): string {
  return readFileSync(join(FIXTURES, 'deliberations', file), 'utf8');
}

export function fixturePath(file: string): string {
  return join(FIXTURES, 'deliberations', file);
}

/** Stand-ins for cairn as a dev dependency of `root`: each executable in node_modules/.bin says it ran. */
export function devDependency(root: string): void {
  const bin = join(root, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  for (const name of ['auto-recall', 'memory-capture', 'cairn']) {
    writeFileSync(join(bin, name), `#!/bin/sh\necho "ran ${name} $*"\n`);
    chmodSync(join(bin, name), 0o755);
  }
}

/**
 * The lines of Codex's config.toml that trust cairn's hooks of the project at `root` as /hooks
 * records them (test/hosts/codex.test.ts shows the real Codex runs hooks trusted so).
 */
export function codexHookTrust(root: string): string {
  const settings = JSON.parse(readFileSync(join(root, '.codex', 'hooks.json'), 'utf8'));
  const lines: string[] = [];
  for (const event of Object.keys(settings.hooks)) {
    for (const { matcher, handler, group, index } of placedHandlers(settings, event)) {
      lines.push(`[hooks.state.${JSON.stringify(`${join(root, '.codex', 'hooks.json')}:${codexEventLabel(event)}:${group}:${index}`)}]`);
      lines.push(`trusted_hash = "${codexHookHash(event, matcher, handler)}"`, '');
    }
  }
  return lines.join('\n');
}

/** Trust a project and cairn's hooks in it, in `codexHome`'s config.toml, as Codex's own prompts do. */
export function trustCodexHooks(codexHome: string, root: string): void {
  mkdirSync(codexHome, { recursive: true });
  appendFileSync(join(codexHome, 'config.toml'), `[projects.${JSON.stringify(root)}]\ntrust_level = "trusted"\n\n${codexHookTrust(root)}`);
}

/** A seeded pseudo-random generator (mulberry32): the same seed gives the same test data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deterministic pseudo-random bytes. */
export function seededBytes(n: number, seed: number): Buffer {
  const next = seededRandom(seed);
  return Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));
}

/**
 * Overwrite the root page of the patterns table in a store's database: the header stays intact, so
 * the open succeeds and the first query on the table fails. Returns the damaged file's bytes.
 */
export function corruptPatternsPage(dbPath: string): Buffer {
  const db = new BetterSqlite3(dbPath);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'patterns'").get() as {
    rootpage: number;
  };
  db.close();
  const bytes = readFileSync(dbPath);
  seededBytes(pageSize, 99).copy(bytes, (rootpage - 1) * pageSize);
  writeFileSync(dbPath, bytes);
  return bytes;
}

/**
 * A copy of the built package (bin, dist) whose node_modules has every real dependency except the
 * named ones, which throw on load as a module whose native build failed does. Run its executables
 * with `run(name, args, { entry: join(pkg, 'bin', name + '.js') })`; the caller removes `pkg`.
 */
export function packageWithBrokenModules(names: string[]): string {
  const pkg = mkdtempSync(join(tmpdir(), 'cairn-broken-'));
  for (const part of ['bin', 'dist', 'package.json']) cpSync(join(REPO, part), join(pkg, part), { recursive: true });
  mkdirSync(join(pkg, 'node_modules'));
  for (const entry of readdirSync(join(REPO, 'node_modules'))) {
    if (names.includes(entry) || entry.startsWith('.')) continue;
    symlinkSync(join(REPO, 'node_modules', entry), join(pkg, 'node_modules', entry));
  }
  for (const name of names) {
    const broken = join(pkg, 'node_modules', name);
    mkdirSync(join(broken, 'lib'), { recursive: true });
    writeFileSync(join(broken, 'package.json'), JSON.stringify({ name, version: '0.0.0', main: 'lib/index.js' }));
    writeFileSync(
      join(broken, 'lib', 'index.js'),
      "throw new Error('Could not locate the bindings file. Tried:\\n → ' + __dirname + '/../build/Release/binding.node');\n",
    );
  }
  return pkg;
}

/**
 * As if a background `cairn rebuild --continue` were applying kept runs (lib/store/deferred.ts): the
 * lock it holds, in the name of this live test process, so that a writer that keeps its run starts
 * none and the test applies the kept runs itself, when it chooses. Returns what lets it go.
 */
export function asIfApplyingKeptRuns(root: string): () => void {
  const lock = join(root, '.cairn', 'cache', 'deferred.lock');
  mkdirSync(dirname(lock), { recursive: true });
  writeFileSync(lock, `${process.pid} ${hostname()} ${Date.now()}\n`);
  return () => rmSync(lock, { force: true });
}

/** Exit 0, empty stdout, exactly one stderr line `cairn <name>: …` matching `message` (SPEC §2). */
export function expectFailOpen(r: RunResult, name: string, message: RegExp): void {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0].startsWith(`cairn ${name}: `)).toBe(true);
  expect(lines[0]).toMatch(message);
}

/** A secret of the corpus (fixtures/secrets/shapes.json): its text with the secret in it, and the secret alone. */
export interface SecretShape {
  name: string;
  secret: string;
  text: string;
}

/** The corpus of some thirty secret shapes, its pieces joined. */
export function secretShapes(): SecretShape[] {
  const { shapes } = JSON.parse(readFileSync(join(FIXTURES, 'secrets', 'shapes.json'), 'utf8')) as {
    shapes: { name: string; secret: string[]; text: string[] }[];
  };
  return shapes.map((s) => {
    const secret = s.secret.join('');
    return { name: s.name, secret, text: s.text.map((piece) => (piece === '{secret}' ? secret : piece)).join('') };
  });
}

/**
 * What must never be seen of a secret: the secret, each long line of a multi-line one, and its first
 * and last twelve characters (a secret cut by a length cap still leaks its start).
 */
export function telltales(secret: string): string[] {
  const parts = [secret, ...secret.split(/\s+/).filter((part) => part.length >= 12)];
  if (secret.length > 12) parts.push(secret.slice(0, 12), secret.slice(-12));
  return [...new Set(parts)];
}

/** The names of the shapes whose secret shows in `text` (none, as a rule). */
export function leakedSecrets(text: string, shapes: SecretShape[]): string[] {
  return shapes.filter((s) => telltales(s.secret).some((part) => text.includes(part))).map((s) => s.name);
}

/** An auditor rule observed in a plan deliberation of LED-1 run r1 (`over` changes any field). */
export function observedEvent(project: string, text: string, over: Partial<ObservedEvent> = {}): ObservedEvent {
  return {
    type: 'pattern.observed',
    pattern: patternId(project, over.role ?? 'auditor', text),
    role: 'auditor',
    text,
    category: 'rule',
    phase: 'plan',
    labels: [],
    files: [],
    deliberation: 'd1',
    issue: 'LED-1',
    run: 'r1',
    ...over,
  };
}
type ObservedEvent = Extract<EventPayload, { type: 'pattern.observed' }>;

/** events.jsonl holding just this observation, written as is: a line an older version (or a hand) wrote, no sanitiser between. */
export function plantObservation(
  root: string,
  ts: string,
  project: string,
  over: Partial<ObservedEvent> & { pattern: string; text: string },
): void {
  const event = { v: 1, id: '01KPLANTED0000000000000000', ts, project, ...observedEvent(project, over.text, { ...UNSCOPED, ...over }) };
  writeFileSync(join(root, '.cairn', 'events.jsonl'), JSON.stringify(event) + '\n');
}

/** Project p1's log with one auditor rule observed per text (a run each); with `fresh`, no database: a fresh clone. */
export function observedPatterns(root: string, texts: string[], fresh = false): void {
  const store = openTestStore(root, 'p1');
  appendEvents(
    store,
    texts.map((text, i) => observedEvent('p1', text, { issue: 'I-1', run: `r${i}`, phase: null, deliberation: `d${i}` })),
  );
  store.close();
  if (!fresh) return;
  const db = join(root, '.cairn', 'cache', 'state.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
}

/** The fields of a deliberation or a block outside any issue, run, phase, label or file. */
export const UNSCOPED = { issue: null, run: null, phase: null, labels: [] as string[], files: [] as string[] };

/**
 * A store of 3,000 auditor and 3,000 judge patterns (bench/stores.js, project PROJECT of bench/stores.js)
 * indexed by `cairn rebuild` at `now`: big enough that a replay outlasts a short deadline.
 */
export function indexedBenchStore(prefix: string, now: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, '.git'));
  initStore(join(dir, '.cairn'));
  writeEventLog(join(dir, '.cairn', 'events.jsonl'), {
    patterns: { auditor: 3000, judge: 3000 },
    nowMs: Date.parse(now),
  });
  expect(run('cairn', ['rebuild', '--project', BENCH_PROJECT, '--strict'], { cwd: dir, env: { CAIRN_NOW: now } }).code).toBe(0);
  return dir;
}

/** An auditor deliberation of `bytes` (bench/corpus.js): a pattern per 800 bytes, 100 findings among them. */
export function longDeliberation(bytes: number): string {
  return deliberationText({
    bytes,
    role: 'auditor',
    issue: 'LED-9',
    run: 'r1',
    items: patternTexts(bytes / 800, 7),
    findingsFromItems: 100,
    seed: 3,
  });
}

/** A knowledge search hit with `content` (id 1 unless `extra` says otherwise). */
export function knowledgeHit(content: string, extra: Partial<KnowledgeHit> = {}): KnowledgeHit {
  return {
    key: 'k',
    type: 'learned',
    content,
    bead: 'b-1',
    tags: [],
    ts: 0,
    status: null,
    archived: false,
    score: 1,
    ...extra,
    id: extra.id ?? 1,
  };
}

/** A knowledge log line of `project` (its type the key's first word, bead b-1), `extra` changing any field. */
export function knowledgeLine(project: string, key: string, content: string, ts: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    key,
    type: key.split('-')[0],
    content,
    source: 'test',
    tags: [],
    ts,
    bead: 'b-1',
    project,
    ...extra,
  });
}

/** A copy of the project at `source`; without its index (`withIndex` false) it is a fresh clone. */
export function projectCopy(source: string, withIndex: boolean): string {
  const root = tempProject({ init: false });
  cpSync(join(source, '.cairn'), join(root, '.cairn'), {
    recursive: true,
    filter: (src) => withIndex || !src.includes(join('.cairn', 'cache')),
  });
  return root;
}
