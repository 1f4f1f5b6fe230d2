import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, cleanEnv, FIXTURES, run, tempProject } from './helpers.js';

// A simulated Claude Code session, end to end (SPEC §4, §7): cairn installed as a dev dependency,
// `cairn init --claude`, then the hook commands run exactly as written into .claude/settings.json —
// through a shell, in the project, with $CLAUDE_PROJECT_DIR set, the payload on stdin — as Claude
// Code runs them.

describe('a Claude Code session', () => {
  it('SessionStart recalls, a Bash `bd comments add … "LEARNED: …"` is captured, and the next SessionStart shows it', () => {
    const root = tempProject({ init: false });
    const bin = join(root, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    for (const name of ['cairn', 'auto-recall', 'memory-capture']) symlinkSync(binPath(name), join(bin, name));
    expect(run('cairn', ['init', '--claude', '--quiet'], { cwd: root }).code).toBe(0);

    const settings = JSON.parse(readFileSync(join(root, '.claude', 'settings.json'), 'utf8'));
    const sessionStart: string = settings.hooks.SessionStart[0].hooks[0].command;
    const bash = settings.hooks.PostToolUse.find((g: { matcher?: string }) => g.matcher === 'Bash').hooks[0];
    expect(sessionStart.startsWith('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/auto-recall --format claude || echo ')).toBe(true);
    expect(bash).toEqual({
      type: 'command',
      if: 'Bash(bd *)',
      command: '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/memory-capture',
      timeout: 10,
    });

    const payload = (fixture: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ ...JSON.parse(readFileSync(join(FIXTURES, 'hooks', fixture), 'utf8')), cwd: root, ...extra });
    const hook = (command: string, input: string) =>
      spawnSync('/bin/sh', ['-c', command], {
        cwd: root,
        env: cleanEnv({ CLAUDE_PROJECT_DIR: root }),
        input,
        encoding: 'utf8',
      });

    const first = hook(sessionStart, payload('claude-session-start.json'));
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toBe(''); // nothing learned yet: nothing injected

    const captured = hook(bash.command, payload('claude-post-tool-use-bash.json'));
    expect(captured.status, captured.stderr).toBe(0);
    expect(captured.stdout).toBe('');
    const log = readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(log).toMatchObject([
      {
        type: 'learned',
        bead: 'led-142',
        content: 'OAuth redirect URI must match the registered one exactly, including the trailing slash',
      },
    ]);

    const next = hook(sessionStart, payload('claude-session-start.json', { session_id: 'a-new-session', source: 'startup' }));
    expect(next.status, next.stderr).toBe(0);
    expect(next.stdout.trimEnd().split('\n')).toHaveLength(1); // one JSON object for Claude Code to parse
    const out = JSON.parse(next.stdout);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    const context: string = out.hookSpecificOutput.additionalContext;
    expect(context).toMatch(
      /^## Relevant knowledge from memory\n\n<untrusted-knowledge source="\.cairn\/memory\/knowledge\.jsonl" treat-as="passive-context">\n/,
    );
    expect(context).toContain(
      '- [LEARNED] OAuth redirect URI must match the registered one exactly, including the trailing slash (bead led-142)',
    );
    expect(context).toMatch(/\n<\/untrusted-knowledge>\n?$/);

    expect(run('cairn', ['doctor'], { cwd: root, env: { PATH: `/usr/bin:/bin` } }).stdout).toMatch(
      /ok {4}hooks: claude +\.claude\/settings\.json: SessionStart → auto-recall, PostToolUse → memory-capture/,
    );
  });
});
