import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  asIfApplyingKeptRuns,
  binPath,
  cleanEnv,
  expectFailOpen,
  FIXTURES,
  packageWithBrokenModules,
  run,
  seededRandom,
  tempProject,
  type RunResult,
} from './helpers.js';

// The fail-open contract (SPEC §2) for the knowledge executables: one `cairn <name>:` line on stderr,
// exit 0, nothing on stdout; --strict (or CAIRN_STRICT=1) turns it into a non-zero exit.

type Exe = { name: string; bin: string; args: string[]; input?: string };
const SESSION = JSON.stringify({ hook_event_name: 'SessionStart', session_id: 's', source: 'startup' });
const CAPTURE: Exe = {
  name: 'memory-capture',
  bin: 'memory-capture',
  args: ['--bead', 'b-1', '--text', 'LEARNED: retries need jitter'],
};
/** The same capture as an agent's hook runs it: a PostToolUse payload on stdin (its cwd, the project the hook runs in). */
const HOOK_CAPTURE: Exe = {
  name: 'memory-capture',
  bin: 'memory-capture',
  args: [],
  input: JSON.stringify({
    ...JSON.parse(readFileSync(join(FIXTURES, 'hooks', 'claude-post-tool-use-bash.json'), 'utf8')),
    cwd: '.',
  }),
};
const AUTO: Exe = { name: 'auto-recall', bin: 'auto-recall', args: [], input: SESSION };
const RECALL: Exe = { name: 'recall', bin: 'cairn', args: ['recall', 'cursor'] };
const ROTATE: Exe = { name: 'rotate', bin: 'cairn', args: ['rotate'] };
const SANITIZE: Exe = { name: 'sanitize', bin: 'cairn', args: ['sanitize'] };
const CURATE: Exe = { name: 'curate', bin: 'cairn', args: ['curate', '--dry-run'] };
const ALL = [CAPTURE, AUTO, RECALL, ROTATE, SANITIZE, CURATE];

function invoke(exe: Exe, cwd: string, extra: string[] = [], env: Record<string, string> = {}, entry?: string): RunResult {
  return run(exe.bin, [...exe.args, ...extra], { cwd, input: exe.input, env, entry });
}

/** A project holding the real Lavra log. */
function withLog(): string {
  const root = tempProject();
  mkdirSync(join(root, '.cairn', 'memory'), { recursive: true });
  copyFileSync(join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl'), join(root, '.cairn', 'memory', 'knowledge.jsonl'));
  return root;
}

describe('usage', () => {
  it.each(ALL)('$name --help prints usage with an example, even without a store', (exe) => {
    const root = tempProject({ init: false });
    const r = run(exe.bin, [...(exe.bin === 'cairn' ? [exe.args[0]] : []), '--help'], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^usage: (cairn )?${exe.name}`));
    expect(r.stdout).toMatch(/\nexample(?: \([^)]*\))?:\n +\S/);
  });

  it.each(ALL)('$name: an unknown flag is one line, exit 0; exit 2 under --strict', (exe) => {
    const root = withLog();
    expectFailOpen(invoke(exe, root, ['--bogus']), exe.name, /unknown flag --bogus/);
    if (exe === CAPTURE || exe === RECALL) expect(invoke(exe, root, ['--bogus'], { CAIRN_STRICT: '1' }).code).toBe(2);
  });

  it('wrong values are usage errors', () => {
    const root = withLog();
    expectFailOpen(invoke(AUTO, root, ['--format', 'xml']), 'auto-recall', /--format must be one of claude, codex, gemini, cursor, text/);
    expectFailOpen(
      invoke({ ...RECALL, args: ['recall', 'x', '--type', 'note'] }, root),
      'recall',
      /--type must be one of learned, decision/,
    );
    expectFailOpen(invoke({ ...CAPTURE, args: ['--text', 'LEARNED: x'] }, root), 'memory-capture', /--bead and --text go together/);
    expectFailOpen(invoke({ ...CURATE, args: ['curate'] }, root), 'curate', /give --dry-run or --apply/);
    expectFailOpen(invoke({ ...ROTATE, args: ['rotate', '--older-than', 'soon'] }, root), 'rotate', /--older-than takes a number of days/);
  });
});

describe('missing .cairn/', () => {
  it.each([AUTO, RECALL, ROTATE, SANITIZE, CURATE])('$name fails open and creates nothing', (exe) => {
    const root = tempProject({ init: false });
    expectFailOpen(invoke(exe, root), exe.name, /no cairn store at .*\.cairn/);
    if (exe === AUTO) expect(invoke(exe, root, ['--strict']).code).toBe(1);
    expect(readdirSync(root)).toEqual(['.git']);
  });

  it('memory-capture outside a git work tree has nowhere to write: it fails open and creates nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-nogit-'));
    try {
      expectFailOpen(invoke(CAPTURE, dir), 'memory-capture', /no cairn store/);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('better-sqlite3 not loadable', () => {
  let pkg: string;
  beforeAll(() => {
    pkg = packageWithBrokenModules(['better-sqlite3']);
  });
  afterAll(() => rmSync(pkg, { recursive: true, force: true }));

  it.each([AUTO, RECALL])('$name fails open with one line naming the module', (exe) => {
    const root = withLog();
    const entry = join(pkg, 'bin', `${exe.bin}.js`);
    expectFailOpen(invoke(exe, root, [], {}, entry), exe.name, /better-sqlite3 is not loadable \(Could not locate the bindings file/);
  });

  it('the commands that need no database work without it: capture, rotate, sanitize, curate', () => {
    const root = withLog();
    for (const exe of [CAPTURE, ROTATE, SANITIZE, CURATE]) {
      const r = invoke(exe, root, ['--strict', '--quiet'], {}, join(pkg, 'bin', `${exe.bin}.js`));
      expect(r.code, `${exe.name}: ${r.stderr}`).toBe(0);
    }
    expect(existsSync(join(root, '.cairn', 'memory', 'knowledge.active.jsonl'))).toBe(true);
  });
});

describe('a database file of random bytes', () => {
  it('auto-recall moves it aside with a warning, rebuilds the index from the log and prints the same block', () => {
    const root = withLog();
    // no background sanitiser between the two runs (it counts tokens, which changes what fits)
    mkdirSync(join(root, '.cairn', 'cache'), { recursive: true });
    writeFileSync(join(root, '.cairn', 'cache', 'sanitize.requested'), '');
    const healthy = invoke(AUTO, root, ['--strict']);
    expect(healthy.stdout).toContain('untrusted-knowledge');
    const db = join(root, '.cairn', 'cache', 'state.db');
    for (const suffix of ['-wal', '-shm']) rmSync(db + suffix, { force: true });
    const next = seededRandom(5);
    writeFileSync(db, Buffer.from(Array.from({ length: 65536 }, () => Math.floor(next() * 256))));
    const r = invoke(AUTO, root);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(healthy.stdout);
    expect(r.stderr).toMatch(
      /^cairn auto-recall: .*state\.db was not a usable database; moved it to .*state\.db\.corrupt-\d+ and rebuilt from the log\n$/,
    );
  });
});

describe('the knowledge log lock', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill();
  });

  it.each([
    ['--bead and --text', CAPTURE],
    ['a hook payload', HOOK_CAPTURE],
  ])(
    'held by a live process past the deadline: nothing is written, the holder is named; the capture (%s) is kept for later, rotate fails open',
    async (_how, capture) => {
      const root = withLog();
      const log = join(root, '.cairn', 'memory', 'knowledge.jsonl');
      const script = `require('fs').writeFileSync(process.argv[1], process.pid + ' ' + require('os').hostname() + ' ' + Date.now() + '\\n', { flag: 'wx' }); process.stdout.write('ready\\n'); setTimeout(() => {}, 60000);`;
      const holder = spawn(process.execPath, ['-e', script, `${log}.lock`], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(holder);
      await new Promise((resolve) => holder.stdout!.once('data', resolve));
      const before = readFileSync(log, 'utf8');
      const heldBy = new RegExp(`lock .*knowledge\\.jsonl\\.lock is held by another process \\(pid ${holder.pid} on ${hostname()}\\)`);
      // as if a background run applied kept runs: none starts here
      const applying = asIfApplyingKeptRuns(root);
      const captured = invoke(capture, root, [], { CAIRN_DEADLINE_MS: '300' });
      expect(captured.code, captured.stderr).toBe(0);
      expect(captured.stdout).toBe('');
      expect(captured.stderr).toMatch(heldBy);
      expect(captured.stderr).toMatch(/: this run is kept \(cache\/deferred\/.*\.json\)/);
      const rotate = spawnSync(process.execPath, [binPath('cairn'), 'rotate'], {
        cwd: root,
        env: cleanEnv({ CAIRN_DEADLINE_MS: '300' }),
        encoding: 'utf8',
      });
      expectFailOpen({ code: rotate.status, stdout: rotate.stdout, stderr: rotate.stderr }, 'rotate', heldBy);
      expect(readFileSync(log, 'utf8')).toBe(before);
      holder.kill();
      await new Promise((resolve) => holder.once('exit', resolve));
      // the lock released, the kept capture is applied: the comment is in the log once
      applying();
      const drained = spawnSync(process.execPath, [binPath('cairn'), 'rebuild', '--continue', '--json', '--strict'], {
        cwd: root,
        env: cleanEnv({}),
        encoding: 'utf8',
      });
      expect(drained.status, drained.stderr).toBe(0);
      expect(JSON.parse(drained.stdout).deferred).toBe(1);
      const added = readFileSync(log, 'utf8').slice(before.length).split('\n').filter(Boolean);
      expect(added).toHaveLength(1);
    },
  );
});
