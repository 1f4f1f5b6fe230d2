import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import { tempDir, type RunResult } from '../helpers.js';
import type { ModelMock } from './mock.js';

// One agent session of a real host CLI against the model mock, in a throwaway git project that has
// cairn installed (test/hosts/install.ts) and a fake `bd` on PATH. Each project has its own HOME, so
// nothing a host keeps (settings, trust, transcripts) leaks between tests or from the machine.

export interface HostsSetup {
  /** The pinned host CLIs' bin directory. */
  bin: string;
  /** A project with cairn installed from this checkout's tarball. */
  installed: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    hosts: HostsSetup;
  }
}

export interface Project {
  root: string;
  /** The HOME every host and hook of this project runs with. */
  home: string;
  /** Holds the fake `bd`; first on PATH. */
  bin: string;
  /** What the fake bd was asked to do, a line per run. */
  bdLog: string;
}

export interface Session extends RunResult {
  ms: number;
}

export const PROMPT = 'Record what you learned about the export in the bead.';

/**
 * A git project whose node_modules is the installed one (linked: a user's `npm install` result),
 * unless `cairn: false` (a teammate who has not run npm install yet).
 */
export function newProject(opts: { cairn?: boolean } = {}): Project {
  const base = realpathSync(tempDir('cairn-hosts-'));
  const root = join(base, 'project');
  const home = join(base, 'home');
  const bin = join(base, 'bin');
  for (const dir of [root, home, bin]) mkdirSync(dir);
  git(root, 'init', '-q');
  const { installed } = inject('hosts');
  writeFileSync(join(root, 'package.json'), readFileSync(join(installed, 'package.json')));
  if (opts.cairn !== false) symlinkSync(join(installed, 'node_modules'), join(root, 'node_modules'));
  const project = { root, home, bin, bdLog: join(base, 'bd.log') };
  fakeBd(project, 0);
  // login shells (Codex runs commands and hooks with one) start from /etc/profile's PATH, as a user's do
  writeFileSync(join(home, '.bash_profile'), `export PATH=${bin}:${dirname(process.execPath)}:$PATH\n`);
  return project;
}

export function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/** `bd` that records its arguments and exits with `code` (1: bd rejected the comment). */
export function fakeBd(project: Project, code: number): void {
  const bd = join(project.bin, 'bd');
  const reject = code === 0 ? '' : `echo "Error: issue not found: $3" >&2\n`;
  writeFileSync(bd, `#!/bin/sh\necho "$*" >> '${project.bdLog}'\n${reject}exit ${code}\n`);
  chmodSync(bd, 0o755);
}

/** The environment a user's shell would give: no variables of this test run's. */
export function baseEnv(project: Project, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: project.home,
    PATH: `${project.bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    ...extra,
  };
}

/** `npx --no-install cairn …` in the project, as a user runs it (`--no-install`: never the registry's `cairn`). */
export function cairn(project: Project, args: string[], env: Record<string, string> = {}): RunResult {
  const r = spawnSync('npx', ['--no-install', 'cairn', ...args], {
    cwd: project.root,
    env: baseEnv(project, env),
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A knowledge entry captured under `bead` before the session, as a hook would have: what recall should show. */
export function seedKnowledge(project: Project, bead: string): RunResult {
  return cairn(project, ['memory-capture', '--bead', bead, '--text', 'LEARNED: the export needs the account_id index']);
}

export interface Doctor {
  code: number | null;
  checks: DoctorCheck[];
}

export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'off';
  detail: string;
}

/** `cairn doctor --json`, run from the installed cairn (so it works where the project's own is missing). */
export function doctor(project: Project, opts: { readOnly?: string; env?: Record<string, string> } = {}): Doctor {
  const cairnBin = join(inject('hosts').installed, 'node_modules', '.bin', 'cairn');
  const run = withReadOnly(opts.readOnly, cairnBin, ['doctor', '--json']);
  const r = spawnSync(run.command, run.args, { cwd: project.root, env: baseEnv(project, opts.env), encoding: 'utf8' });
  run.undo();
  return { code: r.status, checks: (JSON.parse(r.stdout) as { checks: DoctorCheck[] }).checks };
}

export interface KnowledgeLine {
  key: string;
  type: string;
  content: string;
  bead?: string;
}

/** The knowledge log's entries (none when there is no log). */
export function knowledge(root: string): KnowledgeLine[] {
  const path = join(root, '.cairn', 'memory', 'knowledge.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as KnowledgeLine);
}

/**
 * `command` run with `dir` unwritable. Not as root: by its mode, for the run. As root, whom modes do
 * not stop: under a read-only bind mount of it, in a mount namespace of the run's own (unshare -m).
 */
function withReadOnly(dir: string | undefined, command: string, args: string[]): Spawned {
  if (dir === undefined) return { command, args, undo: () => {} };
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return { command, args, undo: () => chmodSync(dir, 0o755) };
  }
  const script = 'mount --bind -o ro "$0" "$0" && exec "$@"';
  return { command: 'unshare', args: ['-m', 'sh', '-c', script, dir, command, ...args], undo: () => {} };
}

interface Spawned {
  command: string;
  args: string[];
  /** What the run changed, undone once it has ended. */
  undo(): void;
}

/** One session of a host CLI (its pinned install) in `project`, or in `opts.cwd`. */
function runHost(host: string, args: string[], env: Record<string, string>, project: Project, opts: SessionOptions): Promise<Session> {
  const started = Date.now();
  const run = withReadOnly(opts.readOnly, join(inject('hosts').bin, host), [...args, ...(opts.args ?? [])]);
  return new Promise((resolve) => {
    const child = spawn(run.command, run.args, {
      cwd: opts.cwd ?? project.root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(kill);
      run.undo();
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export interface SessionOptions {
  /** Extra arguments for the CLI (e.g. `--max-turns 1`). */
  args?: string[];
  /** A directory the session cannot write (a read-only cache). */
  readOnly?: string;
  /** Where the CLI is started (the project root by default). */
  cwd?: string;
}

/** `claude -p` (print mode: no trust dialog), streaming its events as JSON lines. */
export function runClaude(project: Project, mock: ModelMock, opts: SessionOptions = {}): Promise<Session> {
  const env = baseEnv(project, {
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });
  const args = ['-p', PROMPT, '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash'];
  return runHost('claude', args, env, project, opts);
}

export interface CodexOptions extends SessionOptions {
  /** The project trusted in config.toml (the default), as Codex's first-run prompt records it. */
  trustProject?: boolean;
  /** `--dangerously-bypass-hook-trust` (the default), or the hooks' own trust as config.toml holds it. */
  bypassHookTrust?: boolean;
}

/** $CODEX_HOME for the project's sessions. */
export function codexHome(project: Project): string {
  return join(project.home, '.codex');
}

/**
 * config.toml: the mock as a custom model provider, the project trusted (else Codex reads none of
 * its .codex/), then what the test added (hook trust, as Codex's /hooks records it).
 */
function codexConfig(project: Project, mock: ModelMock, trustProject: boolean): string {
  const extra = join(codexHome(project), 'extra.toml');
  return [
    'model = "mock-model"',
    'model_provider = "mock"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = "${mock.url}/v1"`,
    'wire_api = "responses"',
    'env_key = "CAIRN_TEST_MODEL_KEY"',
    '',
    ...(trustProject ? [`[projects.${JSON.stringify(project.root)}]`, 'trust_level = "trusted"', ''] : []),
    existsSync(extra) ? readFileSync(extra, 'utf8') : '',
  ].join('\n');
}

/** Lines for $CODEX_HOME/config.toml, after the mock's (hook trust, as Codex's /hooks writes it). */
export function addCodexConfig(project: Project, text: string): void {
  mkdirSync(codexHome(project), { recursive: true });
  appendFileSync(join(codexHome(project), 'extra.toml'), text);
}

/** `codex exec --json` (stdin closed: it would wait for more prompt). */
export function runCodex(project: Project, mock: ModelMock, opts: CodexOptions = {}): Promise<Session> {
  const home = codexHome(project);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.toml'), codexConfig(project, mock, opts.trustProject ?? true));
  const env = baseEnv(project, { CODEX_HOME: home, CAIRN_TEST_MODEL_KEY: 'not-a-key' });
  const trust = (opts.bypassHookTrust ?? true) ? ['--dangerously-bypass-hook-trust'] : [];
  return runHost('codex', ['exec', '--json', ...trust, PROMPT], env, project, opts);
}

/** `gemini -p` with an API key for the mock (GOOGLE_GEMINI_BASE_URL) and the project folder trusted. */
export function runGemini(project: Project, mock: ModelMock, opts: SessionOptions = {}): Promise<Session> {
  const dir = join(project.home, '.gemini');
  mkdirSync(dir, { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings));
  writeFileSync(join(dir, 'trustedFolders.json'), JSON.stringify({ [project.root]: 'TRUST_FOLDER' }));
  const env = baseEnv(project, { GEMINI_API_KEY: 'not-a-key', GOOGLE_GEMINI_BASE_URL: mock.url });
  return runHost('gemini', ['-p', PROMPT, '--yolo', '--output-format', 'json'], env, project, opts);
}
