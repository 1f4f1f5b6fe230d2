import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookChecks, resolveProgram } from '../lib/hosts/check.js';
import { libraryCheck } from '../lib/landing/library.js';
import { configCheck, databaseChecks, healthCheck, projectIdCheck } from '../lib/store/doctor.js';
import { locate } from '../lib/store/root.js';
import { recordFailure } from '../lib/store/health.js';
import { eventFollower } from '../lib/events/log.js';
import { knowledgeFollowers } from '../lib/knowledge/index.js';
import { fixturePath, openTestStore, packageWithBrokenModules, run, tempProject } from './helpers.js';

// `cairn doctor` (SPEC §2): one test per broken state it reports, and exit 0 on a healthy store.

/** A project with a store that has seen a deliberation (so the database and the event log exist). */
function populated(): string {
  const root = tempProject();
  const r = run('store-deliberation', ['--role', 'auditor', '--issue', 'LED-101', '--run', 'r1', '--file', fixturePath('led-101-r1-plan-auditor.md'), '--strict'], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
  return root;
}

/** A directory of stand-in hook executables, for PATH. */
function fakeExecutables(root: string): string {
  const bin = join(root, 'fake-bin');
  mkdirSync(bin);
  for (const name of ['auto-recall', 'memory-capture']) {
    writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

const statusOf = (checks: { name: string; status: string }[], name: string) => checks.find((c) => c.name === name)?.status;

describe('cairn doctor as a process', () => {
  it('a healthy store with Claude Code hooks that resolve: every check ok, exit 0', () => {
    const root = populated();
    run('cairn', ['init', '--claude'], { cwd: root });
    const env = { PATH: `${fakeExecutables(root)}:${process.env.PATH}` };
    const r = run('cairn', ['doctor'], { cwd: root, env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}ok {4}store /);
    expect(r.stdout).toMatch(/\n {2}ok {4}hooks: claude +\.claude\/settings\.json: SessionStart → auto-recall, PostToolUse → memory-capture\n/);
    expect(r.stdout).toMatch(/\n {2}off {3}hooks: codex /);
    expect(r.stdout.endsWith('No problems found.\n')).toBe(true);
    const json = JSON.parse(run('cairn', ['doctor', '--json'], { cwd: root, env }).stdout);
    expect(json.ok).toBe(true);
    expect(json.checks.map((c: { name: string }) => c.name)).toEqual([
      'store', 'config.json', 'project id', 'better-sqlite3', 'tiktoken', 'database', 'events index', 'knowledge-log index', 'knowledge-archive index', 'knowledge-active index',
      'landing-patterns.json', 'health',
      'hooks: claude', 'hooks: codex', 'hooks: gemini', 'hooks: cursor',
    ]);
  });

  it('no store: fail, exit 1', () => {
    const root = tempProject({ init: false });
    const r = run('cairn', ['doctor'], { cwd: root });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/fail {2}store +no store at .*\.cairn \(cairn init\)/);
    expect(r.stdout.endsWith('1 problem(s) found.\n')).toBe(true);
  });

  it('recorded fail-open errors: fail with the last ones; --clear forgets them', () => {
    const root = populated();
    recordFailure(join(root, '.cairn'), 'format-patterns', 'database is locked', new Date('2026-11-02T09:00:00Z'));
    recordFailure(join(root, '.cairn'), 'memory-capture', 'lock .cairn/memory/knowledge.jsonl.lock is held', new Date('2026-11-02T09:05:00Z'));
    const r = run('cairn', ['doctor', '--json'], { cwd: root });
    expect(r.code).toBe(1);
    const health = JSON.parse(r.stdout).checks.find((c: { name: string }) => c.name === 'health');
    expect(health.status).toBe('fail');
    expect(health.detail).toContain('degraded since 2026-11-02T09:00:00.000Z: 2 error(s), the last: memory-capture: lock');
    expect(health.detail).toContain('2026-11-02T09:00:00.000Z format-patterns: database is locked');
    const cleared = run('cairn', ['doctor', '--clear'], { cwd: root });
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toMatch(/ok {4}health +cleared 2 error\(s\) recorded since 2026-11-02T09:00:00\.000Z/);
    expect(run('cairn', ['doctor'], { cwd: root }).stdout).toMatch(/ok {4}health +no errors recorded/);
  });

  describe('modules that do not load', () => {
    let pkg: string;
    beforeAll(() => {
      pkg = packageWithBrokenModules(['better-sqlite3', 'tiktoken']);
    });
    afterAll(() => rmSync(pkg, { recursive: true, force: true }));

    it('better-sqlite3 and tiktoken each reported, exit 1', () => {
      const root = tempProject();
      const r = run('cairn', ['doctor'], { cwd: root, entry: join(pkg, 'bin', 'cairn.js') });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/fail {2}better-sqlite3 +better-sqlite3 is not loadable \(Could not locate the bindings file/);
      expect(r.stdout).toMatch(/fail {2}tiktoken +tiktoken is not loadable/);
    });
  });
});

describe('each broken state', () => {
  it('config.json that is not JSON', () => {
    const root = tempProject();
    writeFileSync(join(root, '.cairn', 'config.json'), '{ "roles": ');
    expect(configCheck(join(root, '.cairn'))).toMatchObject({ status: 'fail', detail: expect.stringContaining('config.json is not valid JSON') });
  });

  it('a database file that is not a database: fail, and the file is left for inspection', () => {
    const root = tempProject();
    const store = openTestStore(root);
    mkdirSync(join(store.dir, 'cache'), { recursive: true });
    writeFileSync(store.dbPath, 'this is not an SQLite file '.repeat(200));
    const [check] = databaseChecks(store.dbPath, [eventFollower(store)]);
    expect(check).toMatchObject({ name: 'database', status: 'fail', detail: expect.stringMatching(/not a usable database.*rebuilt from the logs/) });
    expect(readdirSync(join(store.dir, 'cache'))).toEqual(['state.db']);
  });

  it('a log the index is behind (a git pull appended to it), either log: warn, not fail', () => {
    const root = populated();
    expect(run('memory-capture', ['--bead', 'led-1', '--text', 'LEARNED: invoices round half-even', '--strict'], { cwd: root }).code).toBe(0);
    const store = openTestStore(root);
    const followers = [eventFollower(store), knowledgeFollowers(store).log];
    expect(databaseChecks(store.dbPath, followers).map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
    const event = { v: 1, id: '01ZZZZZZZZZZZZZZZZZZZZZZZZ', ts: '2099-01-01T00:00:00.000Z', type: 'pattern.aged', project: store.project, pattern: 'p0', issue: null, run: null };
    appendFileSync(store.eventsPath, JSON.stringify(event) + '\n');
    appendFileSync(store.knowledgePath, JSON.stringify({ key: 'fact-x', type: 'fact', content: 'x is y', source: 'user', tags: ['fact'], ts: 1, bead: 'b' }) + '\n');
    const checks = databaseChecks(store.dbPath, followers);
    expect(statusOf(checks, 'database')).toBe('ok');
    for (const name of ['events index', 'knowledge-log index']) {
      expect(checks.find((c) => c.name === name)).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^\d+ of \d+ bytes of the log applied/) });
    }
  });

  it('a landing-pattern library that does not read', () => {
    const root = tempProject();
    expect(libraryCheck(join(root, '.cairn'))).toMatchObject({ status: 'ok', detail: 'none yet' });
    writeFileSync(join(root, '.cairn', 'landing-patterns.json'), '[{"title": 1}');
    expect(libraryCheck(join(root, '.cairn'))).toMatchObject({ status: 'fail', detail: expect.stringContaining('landing-patterns.json is not valid JSON') });
  });

  it('the project id: not recorded, recorded and matching, recorded but this checkout derives another', () => {
    const root = tempProject();
    const derived = locate({ root }).project;
    expect(projectIdCheck(locate({ root }))).toMatchObject({ status: 'warn', detail: expect.stringContaining('is derived, not recorded: run cairn init') });
    run('cairn', ['init', '--quiet'], { cwd: root });
    expect(projectIdCheck(locate({ root }))).toMatchObject({ status: 'ok', detail: `${derived} (recorded, and this checkout derives the same)` });
    // the repository gets a remote: the derived id changes, the recorded one is kept
    writeFileSync(join(root, '.git', 'config'), '[remote "origin"]\n\turl = git@github.com:acme/ledgerly.git\n');
    const moved = projectIdCheck(locate({ root }));
    expect(moved).toMatchObject({ status: 'warn', detail: expect.stringMatching(new RegExp(`^${derived} is recorded in config.json, but this checkout derives [0-9a-f]{16} `)) });
    expect(projectIdCheck(locate({ root, project: 'mine' }))).toMatchObject({ status: 'ok', detail: 'mine (given by --project or $CAIRN_PROJECT)' });
  });

  it('no health record is ok', () => {
    expect(healthCheck(join(tempProject(), '.cairn'))).toEqual({ name: 'health', status: 'ok', detail: 'no errors recorded' });
  });

  it("hooks: a settings file that does not read, a hook whose program is not found, one from the project's node_modules", () => {
    const root = tempProject();
    const env = { PATH: '/usr/bin:/bin' };
    run('cairn', ['init', '--claude', '--codex', '--cursor'], { cwd: root });
    writeFileSync(join(root, '.cursor', 'hooks.json'), '{"version": 1, "hooks": ');
    const checks = hookChecks(root, env);
    expect(checks.find((c) => c.name === 'hooks: claude')).toMatchObject({ status: 'fail', detail: ".claude/settings.json: 'auto-recall', 'memory-capture' not found (install cairn: npm i -D cairn, or npm i -g cairn)" });
    expect(checks.find((c) => c.name === 'hooks: cursor')).toMatchObject({ status: 'fail', detail: expect.stringContaining('hooks.json is not valid JSON') });
    expect(statusOf(checks, 'hooks: gemini')).toBe('off');
    // a dev dependency: the commands init writes name node_modules/.bin through the host's root variable or git
    const bin = join(root, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    for (const name of ['auto-recall', 'memory-capture']) {
      writeFileSync(join(bin, name), '#!/bin/sh\n');
      chmodSync(join(bin, name), 0o755);
    }
    rmSync(join(root, '.claude'), { recursive: true });
    rmSync(join(root, '.codex'), { recursive: true });
    run('cairn', ['init', '--claude', '--codex'], { cwd: root });
    const local = hookChecks(root, env);
    expect(statusOf(local, 'hooks: claude')).toBe('ok');
    expect(statusOf(local, 'hooks: codex')).toBe('ok');
    expect(resolveProgram('$CLAUDE_PROJECT_DIR/node_modules/.bin/auto-recall', root, env)).toBe(join(bin, 'auto-recall'));
    expect(resolveProgram('$(git rev-parse --show-toplevel)/node_modules/.bin/nope', root, env)).toBeNull();
    expect(existsSync(join(root, '.cairn'))).toBe(true);
  });
});
