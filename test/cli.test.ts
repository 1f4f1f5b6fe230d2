import { describe, it, expect } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMMANDS, snakeCaseKeys } from '../lib/cli/runner.js';
import { storeFlags } from '../lib/cli/gate.js';
import { spawn, spawnSync } from 'node:child_process';
import { binPath, cleanEnv, fixturePath, REPO, run, tempProject } from './helpers.js';

// The shared runner (SPEC §2): `cairn <name>` dispatch, usage, and stdout that carries only a
// finished product.

describe('cairn', () => {
  it.each(['--help', '-h', 'help', ''])('cairn %s lists every command with its summary', (arg) => {
    const r = run('cairn', arg ? [arg] : [], { cwd: tempProject({ init: false }) });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^usage: cairn <command>/);
    for (const [name, summary] of Object.entries(COMMANDS))
      expect(r.stdout).toMatch(new RegExp(`\\n  ${name} +${summary.replace(/[()']/g, '.')}\\n`));
  });

  it('every command script is reachable as `cairn <name>` and answers --help', () => {
    const root = tempProject({ init: false });
    const scripts = readdirSync(join(REPO, 'scripts'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.gate.ts'))
      .map((f) => f.slice(0, -3));
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
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr: "cairn: skipped (pipeline continues): unknown command 'nosuch'; see cairn --help\n",
    });
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
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr: "cairn format-patterns: skipped (pipeline continues): --budget must be a whole number ≥ 1, got 'lots'\n",
    });
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
    if (mode.startsWith('record')) ctx.store().appendLines(ctx.store().eventsPath, () => ['{"probe":1}']);
    if (mode === 'record-then-throw') throw new Error('index update failed');
    if (mode === 'hang' || mode === 'record-then-hang') await new Promise((r) => setTimeout(r, 60000));
    if (mode === 'slow') { const until = Date.now() + 400; while (Date.now() < until); }
    ctx.print('second half\\n');
  },
}, process.argv.slice(2));
`,
    );
    return run('probe', ['--root', dir, ...extra], { cwd: dir, entry: script, env });
  }

  it('the append is the commit point: a failure after it is a warning, exit 0 even under --strict (a retry would record it twice)', () => {
    const after = probe('record-then-throw', ['--strict']);
    expect(after).toEqual({
      code: 0,
      stdout: 'first half of the product\n',
      stderr: 'cairn probe: index update failed (after the change was recorded; the next run catches up)\n',
    });
    const waited = probe('record-then-hang', ['--strict'], { CAIRN_DEADLINE_MS: '300' });
    expect(waited).toEqual({
      code: 0,
      stdout: '',
      stderr: 'cairn probe: deadline of 300 ms passed after the change was recorded; nothing printed\n',
    });
  });

  it('synchronous work past the deadline prints nothing: the deadline is checked when the run ends, not only by a timer', () => {
    expect(probe('slow', [], { CAIRN_DEADLINE_MS: '100' })).toEqual({
      code: 0,
      stdout: '',
      stderr: 'cairn probe: skipped (pipeline continues): deadline of 100 ms passed\n',
    });
    expect(probe('slow', ['--strict'], { CAIRN_DEADLINE_MS: '100' }).code).toBe(1);
  });

  it('prints the buffered product only when the command succeeds', () => {
    expect(probe('ok')).toEqual({ code: 0, stdout: 'first half of the product\nsecond half\n', stderr: '' });
  });

  it('stdout stays empty when the command fails after printing', () => {
    expect(probe('throw')).toEqual({
      code: 0,
      stdout: '',
      stderr: 'cairn probe: skipped (pipeline continues): boom with a second line\n',
    });
    expect(probe('throw', ['--strict'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'cairn probe: boom with a second line\n',
    });
    expect(probe('usage', ['--strict']).code).toBe(2);
  });

  it('stdout stays empty when the deadline passes while the command waits', () => {
    const r = probe('hang', [], { CAIRN_DEADLINE_MS: '200' });
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr: 'cairn probe: skipped (pipeline continues): deadline of 200 ms passed\n',
    });
    expect(probe('hang', [], { CAIRN_DEADLINE_MS: '200', CAIRN_STRICT: '1' }).code).toBe(1);
  });

  it('a host that leaves stdin open gets a warning, and the text that did arrive is used: the wait takes half the deadline', async () => {
    const root = tempProject();
    const child = spawn(process.execPath, [binPath('store-deliberation'), '--role', 'auditor', '--json'], {
      cwd: root,
      env: cleanEnv({ CAIRN_DEADLINE_MS: '2000' }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const sent = '## Accumulated Patterns\n- Every queue consumer must acknowledge a message only after its write commits\n';
    child.stdin.write(sent);
    const code = await new Promise((resolve) => child.on('close', resolve)); // stdin is never closed by us
    expect(code).toBe(0);
    expect(stderr).toMatch(
      new RegExp(
        `^cairn store-deliberation: stdin was still open after (9\\d\\d|1000) ms; working on the ${Buffer.byteLength(sent)} bytes read$`,
        'm',
      ),
    );
    expect(JSON.parse(stdout).patterns.map((p: { text: string }) => p.text)).toEqual([
      'Every queue consumer must acknowledge a message only after its write commits',
    ]);
  });
});

// The first hour of a new user (issue 10): a usage mistake is a configuration bug, not a runtime
// fault. It is named (with the nearest command or flag), recorded for `cairn doctor` and the
// auto-recall health line, and exits 2 at a terminal; a pipeline or hook still continues (exit 0).

/** Run with a pseudo-terminal for stdin, stdout and stderr (util-linux `script`); its output is what the terminal showed. */
function onTerminal(bin: string, args: string[], cwd: string): { code: number | null; output: string } {
  const command = [process.execPath, binPath(bin), ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd,
    env: cleanEnv(),
    encoding: 'utf8',
    input: '',
  });
  return { code: r.status, output: r.stdout.replace(/\r\n/g, '\n') };
}

describe('a reader that goes away', () => {
  it('a closed stdout is not a crash: exit 0, nothing on stderr', async () => {
    for (const args of [['--help'], ['--version']]) {
      const child = spawn(process.execPath, [binPath('store-deliberation'), ...args], {
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy(); // the read end closes before the command writes: its write meets EPIPE
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect({ code, stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
    }
  });
});

describe('usage errors', () => {
  const cases: [string, string, string[], string][] = [
    [
      'a mistyped flag',
      'store-deliberation',
      ['--role', 'auditor', '--fle', 'x.md'],
      'cairn store-deliberation: unknown flag --fle (did you mean --file?); see --help',
    ],
    [
      'a single-value flag given twice',
      'format-patterns',
      ['--role', 'auditor', '--role', 'curator'],
      "cairn format-patterns: --role was given 2 times ('auditor', 'curator'); give it once",
    ],
    [
      'a file named without its flag',
      'store-deliberation',
      ['--role', 'auditor', 'notes.md'],
      "cairn store-deliberation: unexpected argument 'notes.md' (did you mean --file?); see --help",
    ],
    ['a mistyped command', 'cairn', ['lsit'], "cairn: unknown command 'lsit' (did you mean list?); see cairn --help"],
    [
      'a flag written without its dashes',
      'cairn',
      ['init', 'claude'],
      "cairn init: unexpected argument 'claude' (did you mean --claude?); see --help",
    ],
    [
      'the start of a longer flag',
      'feedback-loop',
      ['--adversarial', 'auditor', '--validator-role', 'curator'],
      'cairn feedback-loop: unknown flag --adversarial (did you mean --adversarial-role or --adversarial-file?); see --help',
    ],
  ];

  it.each(cases)(
    '%s: exit 2 at a terminal (not recorded: the person saw it); exit 0 in a pipeline, recorded for doctor',
    (_what, bin, args, line) => {
      const root = tempProject();
      const healthPath = join(root, '.cairn', 'cache', 'health.json');
      expect(onTerminal(bin, args, root)).toEqual({ code: 2, output: `${line}\n` });
      expect(existsSync(healthPath)).toBe(false);

      const [prefix, message] = [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)];
      expect(run(bin, args, { cwd: root })).toEqual({
        code: 0,
        stdout: '',
        stderr: `${prefix}: skipped (pipeline continues): ${message}\n`,
      });
      expect(JSON.parse(readFileSync(healthPath, 'utf8')).last_error).toBe(`${prefix.replace(/^cairn ?/, '') || 'cairn'}: ${message}`);
      expect(run(bin, [...args, '--strict'], { cwd: root })).toMatchObject({ code: 2, stderr: `${line}\n` });
    },
  );

  it('under --json the failure is also a JSON object on stdout, with the exit code', () => {
    const root = tempProject();
    const r = run('cairn', ['list', '--json', '--stat', 'verified'], { cwd: root });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      error: 'unknown flag --stat (did you mean --state?); see --help',
      kind: 'usage',
      exit_code: 0,
    });
    expect(JSON.parse(run('cairn', ['list', '--json', '--stat', 'verified', '--strict'], { cwd: root }).stdout)).toMatchObject({
      exit_code: 2,
    });
    const missing = run('format-patterns', ['--role', 'auditor', '--json'], { cwd: tempProject({ init: false }) });
    expect(JSON.parse(missing.stdout)).toMatchObject({
      kind: 'store',
      exit_code: 0,
      error: expect.stringMatching(/^no cairn store at /),
    });
  });

  it('a role unknown to config.json and to the store is named, with the nearest known role', () => {
    const root = tempProject();
    const r = run('format-patterns', ['--role', 'audtor'], { cwd: root });
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr: "cairn format-patterns: role 'audtor' is not in config.json and nothing is stored for it yet (did you mean auditor?)\n",
    });
    expect(run('format-patterns', ['--role', 'auditor'], { cwd: root }).stderr).toBe('');
  });
});

describe('--json', () => {
  it('one naming style at any depth: camelCase keys become snake_case; values and data used as keys stay', () => {
    const report = {
      dryRun: true,
      alreadyDismissed: ['p1'],
      byType: { learned: 2 },
      findings: { A4: 'x' },
      patterns: [{ exampleId: 'pAbC', text: 'keepThis' }],
    };
    expect(snakeCaseKeys(report)).toEqual({
      dry_run: true,
      already_dismissed: ['p1'],
      by_type: { learned: 2 },
      findings: { A4: 'x' },
      patterns: [{ example_id: 'pAbC', text: 'keepThis' }],
    });
    expect(snakeCaseKeys(null)).toBeNull();
  });
});

describe('--version', () => {
  it('every executable and every cairn command prints the package version', () => {
    const root = tempProject({ init: false });
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    const bins = readdirSync(join(REPO, 'bin'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => f.slice(0, -3));
    for (const bin of bins)
      expect(run(bin, ['--version'], { cwd: root }), bin).toEqual({
        code: 0,
        stdout: `cairn ${version}\n`,
        stderr: '',
      });
    expect(run('cairn', ['rebuild', '--version'], { cwd: root }).stdout).toBe(`cairn ${version}\n`);
  });
});

describe("a hook gate's flags", () => {
  it('reads the store flags, in both spellings, and lets no other flag through', () => {
    expect(storeFlags([])).toEqual({});
    expect(storeFlags(['--project', 'p1', '--dir=/tmp/s', '--quiet', '--json'])).toEqual({
      project: 'p1',
      dir: '/tmp/s',
    });
    expect(storeFlags(['--root', '/r', '--strict'])).toEqual({ root: '/r' });
    expect(storeFlags(['--format', 'text'])).toBeUndefined();
    expect(storeFlags(['--project'])).toBeUndefined(); // no value
    expect(storeFlags(['--json=1'])).toBeUndefined();
  });
});
