import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { cronLines } from '../lib/hosts/cron.js';
import { claudeHooks } from '../lib/hosts/claude.js';
import { codexHooks } from '../lib/hosts/codex.js';
import { cursorHooks } from '../lib/hosts/cursor.js';
import { geminiHooks } from '../lib/hosts/gemini.js';
import { commandProgram, commandsFor, executableCommand, installHooks, mergeHooks } from '../lib/hosts/settings.js';
import { binPath, cleanEnv, devDependency, FIXTURES, run, tempProject, trustCodexHooks } from './helpers.js';

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

/** A SessionStart command as cairn writes it: `command`, or what to do when its program cannot run. */
const orElseSays = (command: string) =>
  expect.stringMatching(new RegExp(`^${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\|\\| echo '\\{`));

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
      {
        matcher: 'Bash',
        hooks: [
          { type: 'command', if: 'Bash(bd *)', command: 'memory-capture', timeout: 10 },
          { type: 'command', if: 'Bash(*/bd *)', command: 'memory-capture', timeout: 10 },
        ],
      },
    ]);
    expect(settings.hooks.SessionStart).toEqual([
      USER_CLAUDE_SETTINGS.hooks.SessionStart[0],
      { hooks: [{ type: 'command', command: orElseSays('auto-recall --format claude'), timeout: 10 }] },
    ]);
    expect(readFileSync(settingsPath, 'utf8')).toMatch(/^\{\n {4}"permissions"/); // the file's own indentation
    expect(existsSync(join(root, '.cairn', '.gitignore'))).toBe(true);

    // the summary: what it did, what to commit, the cron lines, the next step — short lines, not one long one
    expect(r.stdout).toContain('.claude/settings.json: SessionStart → auto-recall, PostToolUse (Bash) → memory-capture');
    expect(r.stdout).toContain('git add .cairn .claude/settings.json && git commit -m "Set up cairn"');
    expect(r.stdout).toMatch(/\n {2}17 3 \* \* \* cd \S+ && (PATH=\S+ )?\S*cairn maintain --quiet\n/);
    expect(r.stdout).toMatch(/\n {2}27 3 \* \* \* cd \S+ && (PATH=\S+ )?\S*cairn rotate --quiet\n/);
    expect(r.stdout).toMatch(/\nNext: start a claude session here/);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThan(140);

    const before = readFileSync(settingsPath, 'utf8');
    const again = run('cairn', ['init', '--claude'], { cwd: root });
    expect(again.code).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(before);
    expect(again.stdout).toContain('.claude/settings.json: already set up');
    expect(again.stdout).toContain('.cairn/ already there');
  });

  it('a settings file that is not JSON is reported and left as it is; the other hosts are still set up', () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, '.claude'));
    writeFileSync(join(root, '.claude', 'settings.json'), '{ "hooks": { // a comment\n');
    const r = run('cairn', ['init', '--claude', '--cursor'], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^cairn init: claude: .*settings\.json is not valid JSON .*left as it is\n$/);
    expect(r.stdout).toMatch(
      /\n {2}claude {2}not set up: .*settings\.json is not valid JSON .*left as it is; fix it, then cairn init --claude again\n/,
    );
    expect(r.stdout).toContain('  cursor  .cursor/hooks.json: sessionStart → auto-recall, afterShellExecution → memory-capture');
    expect(r.stdout).toContain('git add .cairn .cursor/hooks.json && git commit'); // not the file it left alone
    expect(r.stdout).toMatch(/\nNext: start a cursor session here/);
    expect(readFileSync(join(root, '.claude', 'settings.json'), 'utf8')).toBe('{ "hooks": { // a comment\n');
    expect(JSON.parse(run('cairn', ['init', '--claude', '--json'], { cwd: root }).stdout).hooks[0]).toMatchObject({
      host: 'claude',
      added: [],
      error: expect.stringContaining('not valid JSON'),
    });
    expect(run('cairn', ['init', '--claude', '--strict'], { cwd: root }).code).toBe(1);
  });

  it('says so when a host would not find the hooks’ programs (cairn run through npx, not installed)', () => {
    const root = tempProject({ init: false });
    // npx puts its temporary node_modules/.bin on PATH; a host's shell does not have it
    const npxBin = join(root, 'npx-cache', '_npx', 'a1b2', 'node_modules', '.bin');
    mkdirSync(npxBin, { recursive: true });
    for (const name of ['auto-recall', 'memory-capture']) {
      writeFileSync(join(npxBin, name), '#!/bin/sh\n');
      chmodSync(join(npxBin, name), 0o755);
    }
    const r = run('cairn', ['init', '--claude'], {
      cwd: root,
      env: { PATH: `${npxBin}:/usr/bin:/bin`, npm_command: 'exec' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      ".claude/settings.json: SessionStart → auto-recall, PostToolUse (Bash) → memory-capture\n          ! 'auto-recall', 'memory-capture' not found on PATH: install cairn (README: Install cairn)",
    );
    // the same PATH outside npm is what the host has: found, no warning
    const again = run('cairn', ['init', '--claude', '--json'], {
      cwd: root,
      env: { PATH: `${npxBin}:/usr/bin:/bin`, npm_command: undefined },
    });
    expect(JSON.parse(again.stdout).hooks[0]).toMatchObject({ host: 'claude', added: [], error: null, warning: null });
  });

  it('a store outside the project (--dir, in a directory made for it): the hooks and the cron lines name it, and a session uses it', () => {
    const root = tempProject({ init: false });
    const stores = join(root, '..', `${basename(root)}-shared stores`);
    const shared = join(stores, 'one');
    try {
      const r = run('cairn', ['init', '--dir', shared, '--claude', '--cursor'], { cwd: root });
      expect(r.code, r.stderr).toBe(0);
      const settings = JSON.parse(readFileSync(join(root, '.claude', 'settings.json'), 'utf8'));
      expect(settings.hooks.PostToolUse[0].hooks[0].command).toBe(`memory-capture --dir '${shared}'`);
      expect(JSON.parse(readFileSync(join(root, '.cursor', 'hooks.json'), 'utf8')).hooks.sessionStart[0].command).toEqual(
        orElseSays(`auto-recall --dir '${shared}' --format cursor`),
      );
      expect(r.stdout).toContain(`maintain --dir '${shared}' --quiet`);
      expect(r.stdout).toContain(
        `Commit the hooks (the store ${shared} is outside this repository: not shared through it):\n  git add .claude/settings.json .cursor/hooks.json`,
      );
      // the capture hook, run as written (bin/ stands in for PATH), lands in the shared store, and no .cairn/ appears
      const bin = join(root, 'bin');
      mkdirSync(bin);
      for (const name of ['memory-capture', 'auto-recall']) symlinkSync(binPath(name), join(bin, name));
      const payload = JSON.stringify({
        ...JSON.parse(readFileSync(join(FIXTURES, 'hooks', 'claude-post-tool-use-bash.json'), 'utf8')),
        cwd: root,
      });
      const hook = spawnSync('sh', ['-c', settings.hooks.PostToolUse[0].hooks[0].command], {
        cwd: root,
        input: payload,
        env: { ...cleanEnv(), PATH: `${bin}:${process.env.PATH}` },
        encoding: 'utf8',
      });
      expect(hook.stderr).toContain('captured learned-oauth-redirect-uri');
      expect(readFileSync(join(shared, 'memory', 'knowledge.jsonl'), 'utf8')).toContain('OAuth redirect URI');
      expect(existsSync(join(root, '.cairn'))).toBe(false);
    } finally {
      rmSync(stores, { recursive: true, force: true });
    }
  });

  it('outside git: hooks name the project by its path, and the summary says how to share it', () => {
    const root = mkdtempSync(join(tmpdir(), 'cairn no git '));
    try {
      devDependency(root);
      const r = run('cairn', ['init', '--codex'], { cwd: root });
      expect(r.code, r.stderr).toBe(0);
      const command = JSON.parse(readFileSync(join(root, '.codex', 'hooks.json'), 'utf8')).hooks.SessionStart[0].hooks[0].command;
      expect(command).toEqual(orElseSays(`'${root}'/node_modules/.bin/auto-recall --format codex`));
      const ran = spawnSync('sh', ['-c', command], { cwd: join(root, '.codex'), encoding: 'utf8' });
      expect(ran.stdout.trim()).toBe('ran auto-recall --format codex');
      expect(r.stdout).not.toContain('git add');
      expect(r.stdout).toContain('Not a git repository: memory is shared through git, so git init here and commit .cairn/ to share it.');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A stand-in for cairn as a dev dependency: node_modules/.bin executables that say how they were run. */
describe('the cron lines', () => {
  it('name cairn by a path cron can run: the dev dependency, else the global install; node’s directory on PATH when cron lacks it', () => {
    const root = tempProject({ init: false });
    const global = join(root, 'prefix', 'bin');
    mkdirSync(global, { recursive: true });
    writeFileSync(join(global, 'cairn'), '#!/bin/sh\n');
    chmodSync(join(global, 'cairn'), 0o755);
    expect(cronLines(root, { env: { PATH: `${global}:/usr/bin` }, nodePath: '/usr/bin/node' })).toEqual([
      `17 3 * * * cd ${root} && ${global}/cairn maintain --quiet`,
      `27 3 * * * cd ${root} && ${global}/cairn rotate --quiet`,
    ]);
    devDependency(root);
    expect(
      cronLines(root, {
        env: { PATH: `${global}:/usr/bin` },
        nodePath: '/home/me/.nvm/versions/node/v20.19.0/bin/node',
      })[0],
    ).toBe(`17 3 * * * cd ${root} && PATH=/home/me/.nvm/versions/node/v20.19.0/bin:$PATH node_modules/.bin/cairn maintain --quiet`);
    const spaced = join(root, "it's here");
    mkdirSync(spaced);
    expect(cronLines(spaced, { env: { PATH: '/usr/bin' }, nodePath: '/usr/bin/node' })[0]).toBe(
      `17 3 * * * cd '${root}/it'\\''s here' && cairn maintain --quiet`,
    );
    const line = cronLines(root, { env: { PATH: '/usr/bin' } })[0].replace(/^17 3 \* \* \* /, '');
    expect(spawnSync('sh', ['-c', line], { env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' }).stdout.trim()).toBe(
      'ran cairn maintain --quiet',
    );
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
        SessionStart: [{ hooks: [{ type: 'command', command: orElseSays('auto-recall --format codex'), timeout: 10 }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'memory-capture', timeout: 10 }] }],
      },
    });
    expect(JSON.parse(readFileSync(join(root, '.gemini', 'settings.json'), 'utf8'))).toEqual({
      hooks: {
        SessionStart: [
          {
            hooks: [
              {
                name: 'cairn-auto-recall',
                type: 'command',
                command: orElseSays('auto-recall --format gemini'),
                timeout: 10000,
              },
            ],
          },
        ],
        AfterTool: [
          {
            matcher: 'run_shell_command',
            hooks: [{ name: 'cairn-memory-capture', type: 'command', command: 'memory-capture', timeout: 10000 }],
          },
        ],
      },
    });
    expect(JSON.parse(readFileSync(join(root, '.cursor', 'hooks.json'), 'utf8'))).toEqual({
      version: 1,
      hooks: {
        sessionStart: [{ command: orElseSays('auto-recall --format cursor') }],
        afterShellExecution: [{ command: 'memory-capture' }],
      },
    });
  });

  it('an entry of cairn already there (another path, other flags) is kept, not doubled; flat layout too', () => {
    const mine = {
      hooks: {
        SessionStart: [
          {
            hooks: [
              {
                type: 'command',
                command: '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude --limit 5',
              },
            ],
          },
        ],
      },
    };
    const { settings, added } = mergeHooks(
      mine,
      claudeHooks,
      claudeHooks.entries((n) => n),
    );
    expect(added.map((e) => e.event)).toEqual(['PostToolUse', 'PostToolUse']);
    expect(commandsFor(settings, 'nested', 'SessionStart')).toEqual([
      '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude --limit 5',
    ]);
    const cursor = {
      version: 1,
      hooks: { afterShellExecution: [{ command: './audit.sh' }, { command: '/usr/local/bin/memory-capture' }] },
    };
    const merged = mergeHooks(
      cursor,
      cursorHooks,
      cursorHooks.entries((n) => n),
    );
    expect(merged.added.map((e) => e.event)).toEqual(['sessionStart']);
    expect(merged.settings.hooks).toEqual({
      afterShellExecution: [{ command: './audit.sh' }, { command: '/usr/local/bin/memory-capture' }],
      sessionStart: [{ command: orElseSays('auto-recall --format cursor') }],
    });
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
    // a package of a monorepo with its own store: reached from git's top level
    const pkg = join(root, 'packages', 'my api');
    mkdirSync(join(pkg, '.cairn'), { recursive: true });
    devDependency(pkg);
    expect(executableCommand(pkg, cursorHooks, 'auto-recall')).toBe(
      `"$(git rev-parse --show-toplevel)"/'packages/my api'/node_modules/.bin/auto-recall`,
    );
    expect(commandProgram('"$(git rev-parse --show-toplevel)"/node_modules/.bin/auto-recall --format codex')).toBe(
      '$(git rev-parse --show-toplevel)/node_modules/.bin/auto-recall',
    );
    installHooks(root, claudeHooks);
    expect(JSON.parse(readFileSync(join(root, '.claude', 'settings.json'), 'utf8')).hooks.SessionStart[0].hooks[0].command).toEqual(
      orElseSays('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude'),
    );
  });

  it('an async memory-capture hook an earlier cairn wrote: cairn doctor fails it, cairn init --claude replaces it with the synchronous ones and keeps the rest', () => {
    const root = tempProject({ init: false });
    devDependency(root);
    mkdirSync(join(root, '.claude'));
    const old = {
      hooks: {
        ...USER_CLAUDE_SETTINGS.hooks,
        PostToolUse: [
          USER_CLAUDE_SETTINGS.hooks.PostToolUse[0],
          {
            matcher: 'Bash',
            hooks: [
              {
                type: 'command',
                command: '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/memory-capture',
                async: true,
                timeout: 10,
              },
            ],
          },
        ],
      },
    };
    writeFileSync(join(root, '.claude', 'settings.json'), JSON.stringify(old));
    const before = run('cairn', ['doctor', '--json'], { cwd: root });
    expect(JSON.parse(before.stdout).checks.find((c: { name: string }) => c.name === 'hooks: claude')).toEqual({
      name: 'hooks: claude',
      status: 'fail',
      detail: expect.stringMatching(
        /PostToolUse → memory-capture runs async: Claude Code cancels it when a session ends right after the command.* cairn init --claude replaces it/,
      ),
    });
    const r = run('cairn', ['init', '--claude'], { cwd: root });
    expect(r.stdout).toContain('replaced the PostToolUse hook an earlier cairn wrote: it runs async');
    const settings = JSON.parse(readFileSync(join(root, '.claude', 'settings.json'), 'utf8'));
    expect(settings.hooks.PostToolUse).toEqual([
      USER_CLAUDE_SETTINGS.hooks.PostToolUse[0],
      {
        matcher: 'Bash',
        hooks: ['Bash(bd *)', 'Bash(*/bd *)'].map((rule) => ({
          type: 'command',
          if: rule,
          command: '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/memory-capture',
          timeout: 10,
        })),
      },
    ]);
    expect(settings.hooks.Stop).toEqual(USER_CLAUDE_SETTINGS.hooks.Stop);
    expect(
      JSON.parse(run('cairn', ['doctor', '--json'], { cwd: root }).stdout).checks.find((c: { name: string }) => c.name === 'hooks: claude')
        .status,
    ).toBe('ok');
  });

  it.each(['claude', 'codex', 'gemini', 'cursor'] as const)(
    '%s: where cairn is not installed (before npm install), the SessionStart hook tells the session what to do',
    (host) => {
      const root = tempProject({ init: false });
      devDependency(root);
      expect(run('cairn', ['init', `--${host}`], { cwd: root }).code).toBe(0);
      rmSync(join(root, 'node_modules'), { recursive: true });
      const file = JSON.parse(
        readFileSync(
          join(
            root,
            {
              claude: '.claude/settings.json',
              codex: '.codex/hooks.json',
              gemini: '.gemini/settings.json',
              cursor: '.cursor/hooks.json',
            }[host],
          ),
          'utf8',
        ),
      );
      const command: string = host === 'cursor' ? file.hooks.sessionStart[0].command : file.hooks.SessionStart[0].hooks[0].command;
      const env = { PATH: '/usr/bin:/bin', CLAUDE_PROJECT_DIR: root, GEMINI_PROJECT_DIR: root };
      const hook = spawnSync('sh', ['-c', command], { cwd: root, env, input: '{}', encoding: 'utf8' });
      expect(hook.status).toBe(0);
      const out = JSON.parse(hook.stdout);
      const context: string = host === 'cursor' ? out.additional_context : out.hookSpecificOutput.additionalContext;
      expect(context).toBe(
        'cairn: auto-recall could not run here, so the memory of this project is neither recalled nor captured: run npm install at the project root, then run cairn doctor.',
      );
    },
  );

  it('--codex says what Codex still needs: trust the project, then the hooks (until then it skips them without a word); nothing once they are trusted', () => {
    const root = tempProject({ init: false });
    devDependency(root);
    const codexHome = join(root, 'codex-home');
    const init = () => run('cairn', ['init', '--codex'], { cwd: root, env: { CODEX_HOME: codexHome } }).stdout;
    expect(init()).toContain(
      '          Codex runs them only once you trust the project and then the hooks: start codex here, /hooks (codex exec too;',
    );
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, 'config.toml'), `[projects.${JSON.stringify(root)}]\ntrust_level = "trusted"\n`);
    expect(init()).toContain(
      "          ! Codex has not trusted cairn's SessionStart, PostToolUse hook(s) and skips them without a word: start codex here and trust them in /hooks",
    );
    rmSync(join(codexHome, 'config.toml'));
    trustCodexHooks(codexHome, root);
    expect(init()).not.toMatch(/!|trust/);
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
    const log = readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(log.every((e) => typeof e === 'object' && typeof e.content === 'string' && e.content !== '')).toBe(true);
    expect(new Set(log.map((e) => e.key))).toEqual(new Set(decoded.map((e) => e.key)));
    const again = run('cairn', ['init', '--import-lavra', source], { cwd: root });
    expect(again.stdout).toContain(`0 knowledge entries imported from ${source} (217 already there)`);
    expect(
      readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(217);
  });

  it('a log that is not there is said, before anything is set up', () => {
    const root = tempProject({ init: false });
    const r = run('cairn', ['init', '--claude', '--import-lavra', '.beads/knowledge.jsonl'], { cwd: root });
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe(
      'cairn init: skipped (pipeline continues): --import-lavra .beads/knowledge.jsonl: no such file (the Lavra log is usually .beads/memory/knowledge.jsonl); nothing was set up\n',
    );
    expect(existsSync(join(root, '.cairn'))).toBe(false);
    expect(existsSync(join(root, '.claude'))).toBe(false);
  });
});
