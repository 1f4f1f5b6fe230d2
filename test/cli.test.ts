import { describe, it, expect } from 'vitest';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMMANDS } from '../lib/cli/runner.js';
import { spawn } from 'node:child_process';
import { binPath, cleanEnv, fixturePath, REPO, run, tempProject } from './helpers.js';

// The shared runner (SPEC §2): `cairn <name>` dispatch, usage, and stdout that carries only a
// finished product.

describe('cairn', () => {
  it.each(['--help', '-h', 'help', ''])('cairn %s lists every command with its summary', (arg) => {
    const r = run('cairn', arg ? [arg] : [], { cwd: tempProject({ init: false }) });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^usage: cairn <command>/);
    for (const [name, summary] of Object.entries(COMMANDS)) expect(r.stdout).toMatch(new RegExp(`\\n  ${name} +${summary.replace(/[()']/g, '.')}\\n`));
  });

  it('every command script is reachable as `cairn <name>` and answers --help', () => {
    const root = tempProject({ init: false });
    const scripts = readdirSync(join(REPO, 'scripts')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
    expect(scripts).toEqual(expect.arrayContaining(['store-deliberation', 'format-patterns', 'rebuild', 'events', 'explain']));
    for (const name of scripts) {
      expect(Object.keys(COMMANDS), `${name} is not listed by cairn --help`).toContain(name);
      const r = run('cairn', [name, '--help'], { cwd: root });
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stdout, name).toMatch(/^usage: /);
      expect(r.stdout, name).toContain(name);
    }
  });

  it('an unknown command is a message, not a crash: exit 0, or 2 under --strict / CAIRN_STRICT=1', () => {
    const cwd = tempProject({ init: false });
    const r = run('cairn', ['nosuch', '--role', 'x'], { cwd });
    expect(r).toEqual({ code: 0, stdout: '', stderr: "cairn: skipped (pipeline continues): unknown command 'nosuch'; see cairn --help\n" });
    expect(run('cairn', ['nosuch', '--strict'], { cwd }).code).toBe(2);
    expect(run('cairn', ['nosuch'], { cwd, env: { CAIRN_STRICT: '1' } }).code).toBe(2);
  });

  it('`cairn store-deliberation` and the store-deliberation executable are the same command', () => {
    const root = tempProject();
    const args = ['--role', 'auditor', '--issue', 'LED-101', '--file', fixturePath('led-101-r1-plan-auditor.md'), '--json', '--strict'];
    const direct = JSON.parse(run('store-deliberation', [...args, '--run', 'r1'], { cwd: root }).stdout);
    const via = JSON.parse(run('cairn', ['store-deliberation', ...args, '--run', 'r2'], { cwd: root }).stdout);
    expect(via.patterns.map((p: { id: string }) => p.id)).toEqual(direct.patterns.map((p: { id: string }) => p.id));
    expect(via.patterns.every((p: { status: string }) => p.status === 'seen')).toBe(true);
  });
});

describe('output discipline', () => {
  it('every stderr line is prefixed with the command name; --quiet keeps only warnings', () => {
    const root = tempProject();
    const args = ['--role', 'auditor', '--file', fixturePath('led-101-r1-plan-auditor.md')];
    const r = run('store-deliberation', args, { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cairn store-deliberation: stored d\w+ \(L3, FAIL\): \d+ patterns/);
    for (const line of r.stderr.trimEnd().split('\n')) expect(line.startsWith('cairn store-deliberation: ')).toBe(true);
    expect(run('store-deliberation', [...args, '--quiet'], { cwd: root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('a bad flag value is a usage error with nothing on stdout', () => {
    const root = tempProject();
    const r = run('format-patterns', ['--role', 'auditor', '--budget', 'lots'], { cwd: root });
    expect(r).toEqual({ code: 0, stdout: '', stderr: "cairn format-patterns: skipped (pipeline continues): --budget must be a whole number ≥ 1, got 'lots'\n" });
    expect(run('format-patterns', ['--role', 'auditor', '--budget', 'lots', '--strict'], { cwd: root }).code).toBe(2);
  });

  /** A command run by the shared runner that prints part of its product, then does `mode`. */
  function probe(mode: string, extra: string[] = [], env: Record<string, string> = {}) {
    const dir = tempProject();
    const script = join(dir, 'probe.mjs');
    writeFileSync(
      script,
      `import { runCommand } from ${JSON.stringify(pathToFileURL(join(REPO, 'dist', 'lib', 'cli', 'runner.js')).href)};
import { CairnError } from ${JSON.stringify(pathToFileURL(join(REPO, 'dist', 'lib', 'core', 'errors.js')).href)};
const mode = ${JSON.stringify(mode)};
process.exitCode = await runCommand({
  name: 'probe', summary: 'test probe', usage: 'usage: probe\\n', flags: {}, deadlineMs: 0,
  async run(ctx) {
    ctx.print('first half of the product\\n');
    if (mode === 'throw') throw new Error('boom\\nwith a second line');
    if (mode === 'usage') throw new CairnError('usage', 'bad call');
    if (mode === 'hang') await new Promise((r) => setTimeout(r, 60000));
    ctx.print('second half\\n');
  },
}, process.argv.slice(2));
`,
    );
    return run('probe', ['--root', dir, ...extra], { cwd: dir, entry: script, env });
  }

  it('prints the buffered product only when the command succeeds', () => {
    expect(probe('ok')).toEqual({ code: 0, stdout: 'first half of the product\nsecond half\n', stderr: '' });
  });

  it('stdout stays empty when the command fails after printing', () => {
    expect(probe('throw')).toEqual({ code: 0, stdout: '', stderr: 'cairn probe: skipped (pipeline continues): boom with a second line\n' });
    expect(probe('throw', ['--strict'])).toEqual({ code: 1, stdout: '', stderr: 'cairn probe: boom with a second line\n' });
    expect(probe('usage', ['--strict']).code).toBe(2);
  });

  it('stdout stays empty when the deadline passes while the command waits', () => {
    const r = probe('hang', [], { CAIRN_DEADLINE_MS: '200' });
    expect(r).toEqual({ code: 0, stdout: '', stderr: 'cairn probe: skipped (pipeline continues): deadline of 200 ms passed\n' });
    expect(probe('hang', [], { CAIRN_DEADLINE_MS: '200', CAIRN_STRICT: '1' }).code).toBe(1);
  });

  it('a host that leaves stdin open gets a warning, and the text that did arrive is used', async () => {
    const root = tempProject();
    const child = spawn(process.execPath, [binPath('store-deliberation'), '--role', 'auditor', '--json'], { cwd: root, env: cleanEnv({ CAIRN_DEADLINE_MS: '0' }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const sent = '## Accumulated Patterns\n- Every queue consumer must acknowledge a message only after its write commits\n';
    child.stdin.write(sent);
    const code = await new Promise((resolve) => child.on('close', resolve)); // stdin is never closed by us
    expect(code).toBe(0);
    expect(stderr).toMatch(new RegExp(`^cairn store-deliberation: stdin was still open after 5000 ms; working on the ${Buffer.byteLength(sent)} bytes read$`, 'm'));
    expect(JSON.parse(stdout).patterns.map((p: { text: string }) => p.text)).toEqual(['Every queue consumer must acknowledge a message only after its write commits']);
  });
});
