import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokenStoreScenarios, commonScenarios, initialised, injected, mockModel, session } from './scenarios.js';
import type { Host } from './scenarios.js';
import { knowledge, runClaude, seedKnowledge } from './session.js';

// Claude Code, the version pinned in test/hosts/package.json, driven in print mode (`claude -p`).
const claude: Host = { name: 'claude', run: runClaude };

describe('Claude Code (real client)', () => {
  commonScenarios(claude);
  brokenStoreScenarios(claude);

  it('a session cut off right after the command (--max-turns 1: no model turn follows) keeps its capture', async () => {
    const project = initialised(claude);
    const mock = await mockModel([`bd comments add cairn-30 "LEARNED: kept when the session ends at once"`]);
    const result = await runClaude(project, mock, { args: ['--max-turns', '1'] });
    expect(result.stdout).toContain('"subtype":"error_max_turns"');
    expect(knowledge(project.root).map((e) => e.bead)).toEqual(['cairn-30']);
  });

  it('started in a subdirectory it reads no project settings: none of cairn’s hooks runs (README: start claude at the project root)', async () => {
    const project = initialised(claude);
    const seeded = seedKnowledge(project, 'cairn-39');
    expect(seeded.code).toBe(0);
    mkdirSync(join(project.root, 'src'));
    const mock = await mockModel([`bd comments add cairn-40 "LEARNED: said from a subdirectory"`]);
    const result = await runClaude(project, mock, { cwd: join(project.root, 'src') });
    expect(result.code, result.stderr).toBe(0);
    expect(injected(mock)).toMatch(/^\(nothing of cairn's\)/);
    expect(knowledge(project.root).map((e) => e.bead)).toEqual(['cairn-39']);
  });

  it('runs the capture hook only for commands that run bd, by name or by a path (its `if` rules, as cairn init writes them)', async () => {
    const project = initialised(claude);
    const settingsPath = join(project.root, '.claude', 'settings.json');
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    const ran = join(project.home, 'capture-hook-runs');
    // the handlers as written, each noting when Claude Code starts it
    for (const handler of settings.hooks.PostToolUse[0].hooks) {
      handler.command = `echo "${handler.if}" >> '${ran}'; ${handler.command}`;
    }
    writeFileSync(settingsPath, JSON.stringify(settings));
    await session(claude, project, [
      'ls -la',
      `echo "bd comments add cairn-20 'LEARNED: only words about bd'"`,
      `git status --short; bd comments add cairn-21 "LEARNED: after another command"`,
      `${project.bin}/bd comments add cairn-22 "FACT: bd by its path"`,
    ]);
    expect(existsSync(ran) ? readFileSync(ran, 'utf8') : '').toBe('Bash(bd *)\nBash(*/bd *)\n');
    expect(knowledge(project.root).map((e) => e.bead)).toEqual(['cairn-21', 'cairn-22']);
  });
});
