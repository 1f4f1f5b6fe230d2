import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HOST_HOOKS } from '../lib/hosts/registry.js';
import { mergeHooks } from '../lib/hosts/settings.js';
import { readHookInput } from '../lib/hosts/payload.js';
import { cleanEnv, fixturePath, REPO, tempProject } from './helpers.js';

// hooks/: the ready configuration for each host, the OpenCode plugin and the example pipeline.

const hookFile = (...parts: string[]) => JSON.parse(readFileSync(join(REPO, 'hooks', ...parts), 'utf8'));

describe('ready configuration files', () => {
  it.each([
    ['claude', ['claude', 'settings.json']],
    ['codex', ['codex', 'hooks.json']],
    ['gemini', ['gemini', 'cairn', 'hooks', 'hooks.json']],
    ['cursor', ['cursor', 'hooks.json']],
  ] as const)('%s: exactly the entries `cairn init` writes (for executables on PATH)', (host, file) => {
    const hooks = HOST_HOOKS[host];
    expect(hookFile(...file)).toEqual(
      mergeHooks(
        { ...hooks.base },
        hooks,
        hooks.entries((name) => name),
      ).settings,
    );
  });

  it('the Gemini extension is named like its directory', () => {
    expect(hookFile('gemini', 'cairn', 'gemini-extension.json')).toMatchObject({
      name: 'cairn',
      version: expect.any(String),
    });
  });
});

describe('the OpenCode plugin', () => {
  it('puts auto-recall’s block into the system prompt and hands bash runs to memory-capture', async () => {
    const root = tempProject({ init: false });
    const bin = join(root, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    // Stand-ins that record the payload they got; auto-recall answers with a block.
    for (const [name, reply] of [
      ['auto-recall', 'KNOWN: the export needs the account_id index'],
      ['memory-capture', ''],
    ]) {
      writeFileSync(
        join(bin, name),
        `#!/bin/sh\ncat > "${join(root, name)}.payload"\necho "$*" > "${join(root, name)}.args"\nprintf '%s' '${reply}'\n`,
      );
      chmodSync(join(bin, name), 0o755);
    }
    const { CairnPlugin } = await import(pathToFileURL(join(REPO, 'hooks', 'opencode', 'cairn.js')).href);
    const hooks = await CairnPlugin({ directory: root });
    await hooks.event({ event: { type: 'session.created', properties: { info: { id: 'ses_1' } } } });
    expect(readFileSync(join(root, 'auto-recall.args'), 'utf8').trim()).toBe('--format text');
    expect(readHookInput(readFileSync(join(root, 'auto-recall.payload'), 'utf8'))).toMatchObject({
      host: 'opencode',
      event: 'session.created',
      sessionId: 'ses_1',
      cwd: root,
    });
    const output = { system: ['You are OpenCode.'] };
    await hooks['experimental.chat.system.transform']({ sessionID: 'ses_1' }, output);
    expect(output.system).toEqual(['You are OpenCode.', 'KNOWN: the export needs the account_id index']);

    const command = 'bd comments add led-153 "MUST-CHECK: run the migration dry-run first"';
    await hooks['tool.execute.before']({ tool: 'bash', sessionID: 'ses_1', callID: 'c1' }, { args: { command } });
    await hooks['tool.execute.after'](
      { tool: 'bash', sessionID: 'ses_1', callID: 'c1' },
      { title: '', output: 'ok', metadata: { exit: 0 } },
    );
    await hooks['tool.execute.after']({ tool: 'read', sessionID: 'ses_1', callID: 'c2' }, { title: '', output: '', metadata: {} });
    for (let i = 0; i < 100; i++) {
      try {
        if (readHookInput(readFileSync(join(root, 'memory-capture.payload'), 'utf8')).command) break;
      } catch {
        // not written yet: memory-capture runs in the background
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(readHookInput(readFileSync(join(root, 'memory-capture.payload'), 'utf8'))).toMatchObject({
      host: 'opencode',
      command,
      toolFailed: false,
    });
  });
});

describe('hooks/pipeline.sh', () => {
  it('before → after → end runs the loop for an auditor/curator pair and captures the landing, with the cairn it ships with', () => {
    const root = tempProject();
    // no cairn on PATH and no npx: the script finds the executables next to it (node_modules/cairn/hooks/ or a checkout)
    const env = cleanEnv({ CAIRN_STRICT: '1', PATH: `${dirname(process.execPath)}:/usr/bin:/bin` });
    const step = (...args: string[]) =>
      spawnSync('bash', [join(REPO, 'hooks', 'pipeline.sh'), ...args], { cwd: root, env, encoding: 'utf8' });
    const scope = ['--issue', 'LED-101', '--run', 'r1', '--files', 'src/cli/status.ts', '--labels', 'cli'];
    expect(step('before', ...scope)).toMatchObject({ status: 0, stdout: '' });
    const after = step(
      'after',
      ...scope,
      '--adversarial-text',
      fixturePath('led-101-r1-plan-auditor.md'),
      '--validator-text',
      fixturePath('led-101-r1-plan-curator.md'),
    );
    expect(after.status, after.stderr).toBe(0);
    expect(after.stderr).toMatch(/cairn store-deliberation: stored .*\ncairn store-deliberation: stored .*\ncairn feedback-loop: /);
    const end = step(
      'end',
      '--issue',
      'LED-101',
      '--run',
      'r1',
      '--result',
      'pass',
      '--report',
      join(REPO, 'fixtures', 'landing', 'land-report.example.json'),
    );
    expect(end.status, end.stderr).toBe(0);
    expect(end.stderr).toContain('landing pattern captured as lp-');
    const next = step(
      'before',
      '--issue',
      'LED-102',
      '--run',
      'r1',
      '--files',
      'src/cli/status.ts',
      '--labels',
      'cli',
      '--query',
      'clinic command center',
    );
    expect(next.stdout).toMatch(
      /^=== HISTORICAL PATTERNS \(auditor\) ===\n[\s\S]*=== END HISTORICAL PATTERNS ===\nPattern: Build a clinic command center — files: /,
    );
    expect(step('sideways', '--issue', 'x', '--run', 'y').status).toBe(2);
  });

  it('runs $CAIRN_BIN instead when it is set (a command with its arguments)', () => {
    const root = tempProject();
    const r = spawnSync('bash', [join(REPO, 'hooks', 'pipeline.sh'), 'before', '--issue', 'LED-1', '--run', 'r1', '--files', 'a b.ts'], {
      cwd: root,
      env: cleanEnv({ CAIRN_BIN: 'printf %s|' }),
      encoding: 'utf8',
    });
    expect(r.stdout).toBe('format-patterns|--role|auditor|--issue|LED-1|--run|r1|--phase|plan|--files|a b.ts|');
    const judge = spawnSync(
      'bash',
      [join(REPO, 'hooks', 'pipeline.sh'), 'before', '--issue', 'LED-1', '--run', 'r1', '--adversarial-role', 'judge'],
      { cwd: root, env: cleanEnv({ CAIRN_BIN: 'printf %s|' }), encoding: 'utf8' },
    );
    expect(judge.stdout).toBe('format-patterns|--role|judge|--issue|LED-1|--run|r1|--phase|plan|');
  });
});
