import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeHooks } from '../lib/hosts/claude.js';
import { codexHooks } from '../lib/hosts/codex.js';
import { cursorHooks } from '../lib/hosts/cursor.js';
import { geminiHooks } from '../lib/hosts/gemini.js';
import { commandProgram, commandsFor, executableCommand, installHooks, mergeHooks } from '../lib/hosts/settings.js';
import { FIXTURES, run, tempProject } from './helpers.js';

// `cairn init` (SPEC §7): the store with its git settings, and hook entries merged into each
// host's settings file without touching the user's own.

const USER_CLAUDE_SETTINGS = {
  permissions: { allow: ['Bash(npm test)'] },
  env: { NODE_ENV: 'development' },
  hooks: {
    PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'npx prettier --write "$CLAUDE_FILE_PATHS"' }] }],
    SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'cat .claude/notes.md' }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
  },
};

describe('cairn init --claude', () => {
  it("keeps the user's other hooks and settings; running it twice changes nothing", () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, '.claude'));
    const settingsPath = join(root, '.claude', 'settings.json');
    writeFileSync(settingsPath, JSON.stringify(USER_CLAUDE_SETTINGS, null, 4) + '\n');
    const r = run('cairn', ['init', '--claude'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(settings.permissions).toEqual(USER_CLAUDE_SETTINGS.permissions);
    expect(settings.env).toEqual(USER_CLAUDE_SETTINGS.env);
    expect(settings.hooks.Stop).toEqual(USER_CLAUDE_SETTINGS.hooks.Stop);
    expect(settings.hooks.PostToolUse).toEqual([
      USER_CLAUDE_SETTINGS.hooks.PostToolUse[0],
      { matcher: 'Bash', hooks: [{ type: 'command', command: 'memory-capture', async: true, timeout: 10 }] },
    ]);
    expect(settings.hooks.SessionStart).toEqual([
      USER_CLAUDE_SETTINGS.hooks.SessionStart[0],
      { hooks: [{ type: 'command', command: 'auto-recall --format claude', timeout: 10 }] },
    ]);
    expect(readFileSync(settingsPath, 'utf8')).toMatch(/^\{\n {4}"permissions"/); // the file's own indentation
    expect(existsSync(join(root, '.cairn', '.gitignore'))).toBe(true);

    // the summary: what it did, what to commit, the cron lines, the next step — short lines, not one long one
    expect(r.stdout).toContain('.claude/settings.json: SessionStart → auto-recall, PostToolUse (Bash) → memory-capture');
    expect(r.stdout).toContain('git add .cairn .claude/settings.json && git commit -m "Set up cairn"');
    expect(r.stdout).toMatch(/\n {2}17 3 \* \* \* cd \S+ && npx --no-install cairn maintain --quiet\n/);
    expect(r.stdout).toMatch(/\n {2}27 3 \* \* \* cd \S+ && npx --no-install cairn rotate --quiet\n/);
    expect(r.stdout).toMatch(/\nNext: start a claude session here/);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThan(140);

    const before = readFileSync(settingsPath, 'utf8');
    const again = run('cairn', ['init', '--claude'], { cwd: root });
    expect(again.code).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(before);
    expect(again.stdout).toContain('.claude/settings.json: already set up');
    expect(again.stdout).toContain('.cairn/ already there');
  });

  it('a settings file that is not JSON is reported and left as it is', () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, '.claude'));
    writeFileSync(join(root, '.claude', 'settings.json'), '{ "hooks": { // a comment\n');
    const r = run('cairn', ['init', '--claude'], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cairn init: .*settings\.json is not valid JSON .*left as it is/);
    expect(readFileSync(join(root, '.claude', 'settings.json'), 'utf8')).toBe('{ "hooks": { // a comment\n');
    expect(run('cairn', ['init', '--claude', '--strict'], { cwd: root }).code).toBe(1);
  });
});

describe('hook settings per host', () => {
  it('writes each host its own layout; --json says what was added', () => {
    const root = tempProject({ init: false });
    const r = run('cairn', ['init', '--codex', '--gemini', '--cursor', '--json'], { cwd: root });
    const out = JSON.parse(r.stdout);
    expect(out.hooks.map((h: { host: string; added: string[] }) => [h.host, h.added])).toEqual([
      ['codex', ['SessionStart', 'PostToolUse']],
      ['gemini', ['SessionStart', 'AfterTool']],
      ['cursor', ['sessionStart', 'afterShellExecution']],
    ]);
    expect(out.commit).toBe('git add .cairn .codex/hooks.json .gemini/settings.json .cursor/hooks.json && git commit -m "Set up cairn"');
    expect(JSON.parse(readFileSync(join(root, '.codex', 'hooks.json'), 'utf8'))).toEqual({
      hooks: {
        SessionStart: [{ hooks: [{ type: 'command', command: 'auto-recall --format codex', timeout: 10 }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'memory-capture', timeout: 10 }] }],
      },
    });
    expect(JSON.parse(readFileSync(join(root, '.gemini', 'settings.json'), 'utf8'))).toEqual({
      hooks: {
        SessionStart: [{ hooks: [{ name: 'cairn-auto-recall', type: 'command', command: 'auto-recall --format gemini', timeout: 10000 }] }],
        AfterTool: [{ matcher: 'run_shell_command', hooks: [{ name: 'cairn-memory-capture', type: 'command', command: 'memory-capture', timeout: 10000 }] }],
      },
    });
    expect(JSON.parse(readFileSync(join(root, '.cursor', 'hooks.json'), 'utf8'))).toEqual({
      version: 1,
      hooks: { sessionStart: [{ command: 'auto-recall --format cursor' }], afterShellExecution: [{ command: 'memory-capture' }] },
    });
  });

  it('an entry of cairn already there (another path, other flags) is kept, not doubled; flat layout too', () => {
    const mine = { hooks: { SessionStart: [{ hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude --limit 5' }] }] } };
    const { settings, added } = mergeHooks(mine, 'nested', claudeHooks.entries((n) => n));
    expect(added.map((e) => e.event)).toEqual(['PostToolUse']);
    expect(commandsFor(settings, 'nested', 'SessionStart')).toEqual(['"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude --limit 5']);
    const cursor = { version: 1, hooks: { afterShellExecution: [{ command: './audit.sh' }, { command: '/usr/local/bin/memory-capture' }] } };
    const merged = mergeHooks(cursor, 'flat', cursorHooks.entries((n) => n));
    expect(merged.added.map((e) => e.event)).toEqual(['sessionStart']);
    expect(merged.settings.hooks).toEqual({ afterShellExecution: [{ command: './audit.sh' }, { command: '/usr/local/bin/memory-capture' }], sessionStart: [{ command: 'auto-recall --format cursor' }] });
  });

  it('a dev dependency is run from the project’s node_modules, named the way each host can resolve it', () => {
    const root = tempProject({ init: false });
    expect(executableCommand(root, claudeHooks, 'auto-recall')).toBe('auto-recall');
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(root, 'node_modules', '.bin', 'auto-recall'), '#!/bin/sh\n');
    chmodSync(join(root, 'node_modules', '.bin', 'auto-recall'), 0o755);
    expect(executableCommand(root, claudeHooks, 'auto-recall')).toBe('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall');
    expect(executableCommand(root, geminiHooks, 'auto-recall')).toBe('"$GEMINI_PROJECT_DIR"/node_modules/.bin/auto-recall');
    expect(executableCommand(root, codexHooks, 'auto-recall')).toBe('"$(git rev-parse --show-toplevel)"/node_modules/.bin/auto-recall');
    expect(commandProgram('"$(git rev-parse --show-toplevel)"/node_modules/.bin/auto-recall --format codex')).toBe('$(git rev-parse --show-toplevel)/node_modules/.bin/auto-recall');
    installHooks(root, claudeHooks);
    expect(JSON.parse(readFileSync(join(root, '.claude', 'settings.json'), 'utf8')).hooks.SessionStart[0].hooks[0].command).toBe(
      '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude',
    );
  });

  it('refuses a settings file whose "hooks" is not an object', () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, '.codex'));
    writeFileSync(join(root, '.codex', 'hooks.json'), '{"hooks": []}');
    expect(() => installHooks(root, codexHooks)).toThrow(/"hooks" is not an object; left as it is/);
    expect(readFileSync(join(root, '.codex', 'hooks.json'), 'utf8')).toBe('{"hooks": []}');
  });
});

describe('cairn init --import-lavra', () => {
  it('imports a real Lavra log, string-wrapped lines included; a second import adds nothing', () => {
    const root = tempProject({ init: false });
    const source = join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl');
    const lines = readFileSync(source, 'utf8').trim().split('\n');
    const decoded = lines.map((l) => {
      const v = JSON.parse(l);
      return typeof v === 'string' ? JSON.parse(v) : v;
    });
    expect(lines.filter((l) => l.startsWith('"')).length).toBe(63);
    const r = run('cairn', ['init', '--import-lavra', source, '--json'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).imported).toEqual({ read: 217, appended: 217, duplicates: 0, unreadable: 0 });
    const log = readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(log.every((e) => typeof e === 'object' && typeof e.content === 'string' && e.content !== '')).toBe(true);
    expect(new Set(log.map((e) => e.key))).toEqual(new Set(decoded.map((e) => e.key)));
    const again = run('cairn', ['init', '--import-lavra', source], { cwd: root });
    expect(again.stdout).toContain(`0 knowledge entries imported from ${source} (217 already there)`);
    expect(readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8').trim().split('\n')).toHaveLength(217);
  });
});
