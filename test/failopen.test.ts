import { describe, it, expect, afterAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import {
  asIfApplyingKeptRuns,
  corruptPatternsPage,
  expectFailOpen,
  fixturePath,
  fixtureText,
  run,
  seededBytes,
  tempProject,
  type RunResult,
} from './helpers.js';

// The fail-open contract (SPEC §2): every failure is one `cairn <name>:` line on stderr, exit 0
// and nothing on stdout; --strict or CAIRN_STRICT=1 turns it into a non-zero exit. The detailed
// cases of three executables; test/faults.test.ts runs every executable under every fault.

const NOW = '2026-03-02T10:00:00.000Z';
const AUDITOR = 'led-101-r1-plan-auditor.md';
const AUDITOR_2 = 'led-102-r1-plan-auditor.md';

type Invocation = { name: string; args: string[]; input?: string | Buffer };

const STORE: Invocation = {
  name: 'store-deliberation',
  args: ['--role', 'auditor', '--issue', 'LED-102', '--run', 'r1'],
  input: fixtureText(AUDITOR_2),
};
const FORMAT: Invocation = { name: 'format-patterns', args: ['--role', 'auditor'] };
const REBUILD: Invocation = { name: 'rebuild', args: [] };

/** `rebuild` is only reachable as `cairn rebuild`; messages still say `cairn rebuild:`. */
function exe(inv: Invocation): { bin: string; args: string[] } {
  return inv.name === 'store-deliberation' || inv.name === 'format-patterns'
    ? { bin: inv.name, args: inv.args }
    : { bin: 'cairn', args: [inv.name, ...inv.args] };
}

function invoke(inv: Invocation, cwd: string, extra: string[] = [], env: Record<string, string> = {}, entryDir?: string): RunResult {
  const { bin, args } = exe(inv);
  return run(bin, [...args, ...extra], {
    cwd,
    input: inv.input,
    env: { CAIRN_NOW: NOW, ...env },
    entry: entryDir ? join(entryDir, 'bin', `${bin}.js`) : undefined,
  });
}

/** The same failure under --strict and under CAIRN_STRICT=1: non-zero, still nothing on stdout. */
function expectStrict(runIt: (extra: string[], env: Record<string, string>) => RunResult, name: string, message: RegExp, code = 1): void {
  for (const r of [runIt(['--strict'], {}), runIt([], { CAIRN_STRICT: '1' })]) {
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^cairn ${name}: `));
    expect(r.stderr).toMatch(message);
  }
}

/** A project whose store already holds one auditor deliberation. */
function populated(): string {
  const root = tempProject();
  const r = run(
    'store-deliberation',
    ['--role', 'auditor', '--issue', 'LED-101', '--run', 'r1', '--file', fixturePath(AUDITOR), '--strict'],
    { cwd: root, env: { CAIRN_NOW: NOW } },
  );
  expect(r.code, r.stderr).toBe(0);
  return root;
}

function eventsOf(root: string): string {
  const path = join(root, '.cairn', 'events.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

describe('a database file of random bytes', () => {
  function corrupt(root: string): Buffer {
    const db = join(root, '.cairn', 'cache', 'state.db');
    for (const suffix of ['-wal', '-shm']) rmSync(db + suffix, { force: true });
    const junk = seededBytes(64 * 1024, 7);
    writeFileSync(db, junk);
    return junk;
  }
  const asides = (root: string) =>
    readdirSync(join(root, '.cairn', 'cache')).filter((f) => f.startsWith('state.db.corrupt-') && !/-(wal|shm)$/.test(f));

  it('format-patterns moves it aside with a warning, rebuilds from the log and prints the same block', () => {
    const root = populated();
    const healthy = invoke(FORMAT, root, ['--strict']);
    expect(healthy.code).toBe(0);
    expect(healthy.stdout).toContain('=== HISTORICAL PATTERNS (auditor) ===');
    const junk = corrupt(root);

    const r = invoke(FORMAT, root);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(healthy.stdout);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^cairn format-patterns: .*state\.db was not a usable database; moved it to .*state\.db\.corrupt-\d+ and rebuilt from the log/,
    );
    const [aside] = asides(root);
    expect(readFileSync(join(root, '.cairn', 'cache', aside))).toEqual(junk);
    // the next run is quiet: the rebuilt database is fine
    expect(invoke(FORMAT, root, ['--strict'])).toEqual({ code: 0, stdout: healthy.stdout, stderr: '' });
  });

  it('store-deliberation and rebuild recover the same way; the stored deliberation is not lost', () => {
    const root = populated();
    corrupt(root);
    const stored = invoke(STORE, root);
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stderr).toMatch(/not a usable database; moved it to/);
    const events = invoke({ name: 'events', args: ['--type', 'deliberation', '--json'] }, root, ['--strict']);
    expect(events.stdout.trim().split('\n')).toHaveLength(2);

    corrupt(root);
    const rebuilt = invoke(REBUILD, root, ['--json']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ rebuilt: true, skipped: 0 });
    expect(rebuilt.stderr).toMatch(/not a usable database; moved it to/);
    expect(asides(root)).toHaveLength(2);
    // the rebuilt index knows both deliberations' patterns (the man-page rule was seen twice)
    const explained = run(
      'cairn',
      ['explain', 'Every new CLI flag must be documented in the man page before merge', '--json', '--strict'],
      { cwd: root },
    );
    expect(JSON.parse(explained.stdout).pattern).toMatchObject({ success_count: 2, lifecycle: 'candidate' });
  });

  it.each([STORE, FORMAT, REBUILD])('$name under --strict: exit 1 and the file is left alone', (inv) => {
    const root = populated();
    const junk = corrupt(root);
    const before = eventsOf(root);
    expectStrict((extra, env) => invoke(inv, root, extra, env), inv.name, /not a usable database/);
    expect(readFileSync(join(root, '.cairn', 'cache', 'state.db'))).toEqual(junk);
    expect(asides(root)).toEqual([]);
    expect(eventsOf(root)).toBe(before);
  });
});

describe('a database with a corrupt page behind an intact header', () => {
  const corruptStore = (root: string) => corruptPatternsPage(join(root, '.cairn', 'cache', 'state.db'));

  it('format-patterns fails open once, moves the file aside, and the next run is rebuilt from the log', () => {
    const root = populated();
    const healthy = invoke(FORMAT, root, ['--strict']);
    corruptStore(root);

    const first = invoke(FORMAT, root);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    // one line (SPEC §2): the failure, then what was said before it — that the file was moved aside
    expect(first.stderr).toMatch(
      /^cairn format-patterns: .*state\.db is corrupt \(database disk image is malformed\); moved it to .*state\.db\.corrupt-\d+/m,
    );
    expect(first.stderr).toMatch(
      /^cairn format-patterns: skipped \(pipeline continues\): database disk image is malformed \(after: .*state\.db is corrupt .*\)\n$/,
    );
    expect(invoke(FORMAT, root, ['--strict'])).toEqual(healthy);
  });

  it('store-deliberation recovers on the next run; cairn rebuild recovers at once', () => {
    const root = populated();
    corruptStore(root);
    expect(invoke(STORE, root).stdout).toBe('');
    const again = invoke(STORE, root, ['--strict', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).patterns.length).toBeGreaterThan(0);

    corruptStore(root);
    const rebuilt = invoke(REBUILD, root, ['--json']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toMatch(/state\.db is corrupt .*moved it to/);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({
      rebuilt: true,
      applied: eventsOf(root).trimEnd().split('\n').length,
    });
    const explained = run(
      'cairn',
      ['explain', 'Every new CLI flag must be documented in the man page before merge', '--json', '--strict'],
      { cwd: root },
    );
    expect(JSON.parse(explained.stdout).pattern).toMatchObject({ success_count: 2 });
  });

  it.each([STORE, FORMAT, REBUILD])('$name under --strict: exit 1 and the file is left alone', (inv) => {
    const root = populated();
    const bytes = corruptStore(root);
    expectStrict((extra, env) => invoke(inv, root, extra, env), inv.name, /database disk image is malformed/);
    expect(readFileSync(join(root, '.cairn', 'cache', 'state.db'))).toEqual(bytes);
  });
});

describe('the term index not built yet (a fresh clone at 100k builds it in the background after the replay)', () => {
  /** The store without its term index; `rows` term rows of another project stand for a large store. */
  function withoutTermIndex(rows = 0): string {
    const root = populated();
    const db = new BetterSqlite3(join(root, '.cairn', 'cache', 'state.db'));
    db.exec('DROP INDEX pattern_terms_key');
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO pattern_terms (project, role, term, pattern, seq, ntok) SELECT 'elsewhere', 'auditor', 'word' || i, 'p' || i, i, 10 FROM n`,
    ).run(rows);
    db.close();
    return root;
  }

  it('store-deliberation keeps its run for later at once in a large store, stores nothing yet, and says why; cairn rebuild applies it', () => {
    // without the index every lookup would read all of pattern_terms: 7–9 s a text at 100k patterns
    const root = withoutTermIndex(50_000);
    const before = eventsOf(root);
    // as if a background run applied kept runs: the test applies the kept run itself
    const applying = asIfApplyingKeptRuns(root);
    // the first for want of the index, the second behind the first
    for (const [extra, why] of [
      [[], /the term index is not built yet .*/],
      [['--strict'], /1 earlier run\(s\) kept for later are not applied yet/],
    ] as const) {
      const r = invoke(STORE, root, [...extra]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^cairn store-deliberation: ${why.source}: this run is kept \\(cache/deferred/.*\\.json\\)`));
    }
    expect(eventsOf(root)).toBe(before);
    // run again while the index is still missing: they stay kept, and why is recorded for cairn doctor
    applying();
    const again = invoke({ ...REBUILD, args: ['--continue', '--json'] }, root, ['--strict']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).deferred).toBe(0);
    expect(readdirSync(join(root, '.cairn', 'cache', 'deferred')).filter((n) => n.endsWith('.json'))).toHaveLength(2);
    expect(readFileSync(join(root, '.cairn', 'cache', 'errors.log'), 'utf8')).toMatch(
      /store-deliberation.*a kept run is not applied yet: the term index is not built yet/,
    );
    expect(invoke(REBUILD, root, ['--strict']).code).toBe(0);
    const stored = eventsOf(root)
      .slice(before.length)
      .split('\n')
      .filter((l) => l.includes('"type":"deliberation.stored"'));
    expect(stored).toHaveLength(1); // kept twice, stored once: the same text for the same issue/run (SPEC §3.9.4)
  });

  it('format-patterns --query in a large store prints the block ranked without relevance, as if no query were given', () => {
    const root = withoutTermIndex(50_000);
    const query = invoke({ ...FORMAT, args: [...FORMAT.args, '--query', 'idempotency keys for retried payment webhooks'] }, root, [
      '--strict',
    ]);
    expect(query.code, query.stderr).toBe(0);
    expect(query.stdout).toContain('HISTORICAL PATTERNS');
    expect(query.stdout).toBe(invoke(FORMAT, root, ['--strict']).stdout);
  });

  it('a small store reads its terms whole: the first writers of a new project, racing a first replay, store and rank as usual', () => {
    const root = withoutTermIndex();
    const stored = invoke({ ...STORE, args: [...STORE.args, '--json'] }, root, ['--strict']);
    expect(stored.code, stored.stderr).toBe(0);
    const out = JSON.parse(stored.stdout) as { patterns: { status: string }[] };
    expect(out.patterns.some((p) => p.status !== 'new')).toBe(true); // the first store's patterns were found
    const query = invoke({ ...FORMAT, args: [...FORMAT.args, '--query', 'idempotency keys for retried payment webhooks'] }, root, [
      '--strict',
    ]);
    expect(query.code, query.stderr).toBe(0);
    expect(query.stdout).not.toBe(invoke(FORMAT, root, ['--strict']).stdout); // ranked with relevance
  });
});

describe('malformed and empty stdin', () => {
  const garbage = seededBytes(4096, 42);
  garbage[0] = 0xff; // never valid UTF-8, whatever the seed
  const cases: [string, Buffer, RegExp][] = [
    ['binary garbage', garbage, /binary data|not valid UTF-8/],
    [
      'latin-1 text (invalid UTF-8)',
      Buffer.from('## Accumulated Patterns\n- Caf\xe9 menus must list every allergen before service starts\n', 'latin1'),
      /not valid UTF-8/,
    ],
    ['text with a NUL byte', Buffer.from('## Accumulated Patterns\n- Every export must be\0 signed\n'), /binary data/],
    ['empty stdin', Buffer.alloc(0), /the deliberation is empty/],
    ['whitespace only', Buffer.from(' \n\t\n'), /the deliberation is empty/],
  ];

  it.each(cases)('store-deliberation rejects %s and stores nothing', (_what, input, message) => {
    const root = populated();
    const before = eventsOf(root);
    const artifacts = readdirSync(join(root, '.cairn', 'artifacts', 'deliberations'));
    const inv = { ...STORE, input };
    expectFailOpen(invoke(inv, root), 'store-deliberation', message);
    expectStrict((extra, env) => invoke(inv, root, extra, env), 'store-deliberation', message);
    expect(eventsOf(root)).toBe(before);
    expect(readdirSync(join(root, '.cairn', 'artifacts', 'deliberations'))).toEqual(artifacts);
  });

  it('format-patterns does not read stdin: garbage there does not change its product', () => {
    const root = populated();
    const clean = invoke(FORMAT, root, ['--strict']);
    const noisy = invoke({ ...FORMAT, input: garbage }, root, ['--strict']);
    expect(noisy).toEqual(clean);
    expect(clean.stdout).toContain('HISTORICAL PATTERNS');
  });
});

describe('a 10 MB stdin', () => {
  it('is cut at 8 MiB with a warning; the deliberation is stored from the prefix', () => {
    const root = tempProject();
    const cap = 8 * 1024 * 1024;
    const head =
      '# auditor\n\n## Accumulated Patterns\n\n- Every queue consumer must acknowledge a message only after its write commits\n- CAUSAL: retries without jitter lead to synchronized load spikes on the primary\n\n## Notes\n\n';
    const filler = 'The review continues with more prose about invoices, ledgers and their totals.\n';
    let text = head + filler.repeat(Math.ceil((cap - head.length) / filler.length));
    text = text.slice(0, cap - 1) + '€' + filler.repeat(Math.ceil((10 * 1024 * 1024 - cap) / filler.length)); // '€' straddles the cap
    const input = Buffer.from(text);
    expect(input.length).toBeGreaterThan(10 * 1000 * 1000);

    const r = invoke({ ...STORE, input }, root, ['--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`cairn store-deliberation: stdin exceeded ${cap} bytes; working on the first ${cap}`);
    const out = JSON.parse(r.stdout) as { deliberation: string; patterns: { text: string; status: string }[] };
    expect(out.patterns.map((p) => p.text)).toEqual([
      'Every queue consumer must acknowledge a message only after its write commits',
      'retries without jitter lead to synchronized load spikes on the primary',
    ]);
    // the prefix ends before the character the cap cut in half
    const artifact = readFileSync(join(root, '.cairn', 'artifacts', 'deliberations', `${out.deliberation}.md`));
    expect(artifact.length).toBe(cap - 1);
    expect(artifact.equals(input.subarray(0, cap - 1))).toBe(true);
    const stored = JSON.parse(eventsOf(root).split('\n')[0]);
    expect(stored).toMatchObject({ type: 'deliberation.stored', size: cap - 1 });
  });
});

describe('the event log lock', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill();
  });

  /** A live process holding `.cairn/events.jsonl.lock` the way cairn writes it. */
  function holdLock(lockPath: string): Promise<ChildProcess> {
    const script = `
      const fs = require('node:fs'), os = require('node:os');
      fs.writeFileSync(process.argv[1], process.pid + ' ' + os.hostname() + ' ' + Date.now() + '\\n', { flag: 'wx' });
      process.stdout.write('ready\\n');
      setTimeout(() => {}, 120000);`;
    const child = spawn(process.execPath, ['-e', script, lockPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      child.stdout!.once('data', () => resolve(child));
      child.once('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
    });
  }

  it('held by a live process past the deadline: nothing stored, the holder named; a writer keeps its run for later', async () => {
    const root = populated();
    const lock = join(root, '.cairn', 'events.jsonl.lock');
    const holder = await holdLock(lock);
    const before = eventsOf(root);
    const env = { CAIRN_DEADLINE_MS: '300' };
    const heldBy = new RegExp(`lock .*events\\.jsonl\\.lock is held by another process \\(pid ${holder.pid} on ${hostname()}\\)`);

    // as if a background run applied kept runs: none starts here
    asIfApplyingKeptRuns(root);
    // the first for the lock, the second behind the first (under --strict too: nothing failed)
    for (const [extra, why] of [
      [[], heldBy],
      [['--strict'], /1 earlier run\(s\) kept for later/],
    ] as const) {
      const r = invoke(STORE, root, [...extra], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/: this run is kept \(cache\/deferred\/.*\.json\)/);
    }
    expect(readdirSync(join(root, '.cairn', 'cache', 'deferred')).filter((n) => n.endsWith('.json'))).toHaveLength(2);
    // format-patterns computes its block but must record the injection; it cannot, so it prints nothing
    const withRun: Invocation = {
      name: 'format-patterns',
      args: ['--role', 'auditor', '--issue', 'LED-101', '--run', 'r2'],
    };
    // (a deadline long enough that the block is built before the lock wait runs out)
    expectFailOpen(invoke(withRun, root, [], { CAIRN_DEADLINE_MS: '1500' }), 'format-patterns', heldBy);
    // without an issue/run there is nothing to record: the block is printed despite the lock
    expect(invoke(FORMAT, root, ['--strict'], env).stdout).toContain('HISTORICAL PATTERNS');

    expect(eventsOf(root)).toBe(before);
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${holder.pid} `)); // never stolen from a live holder
    holder.kill();
  });

  it('left behind by a dead process is broken and the store succeeds', () => {
    const root = populated();
    const lock = join(root, '.cairn', 'events.jsonl.lock');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(lock, `${dead.stdout} ${hostname()} ${Date.now()}\n`);
    const before = eventsOf(root).split('\n').filter(Boolean).length;

    const r = invoke(STORE, root, ['--strict', '--json'], { CAIRN_DEADLINE_MS: '2000' });
    expect(r.code, r.stderr).toBe(0);
    const stored = JSON.parse(r.stdout) as { patterns: unknown[]; links: unknown[] };
    expect(eventsOf(root).split('\n').filter(Boolean).length).toBe(before + 1 + stored.patterns.length + stored.links.length);
    expect(existsSync(lock)).toBe(false);
  });
});

describe('usage', () => {
  it('an unknown flag is a clear message: exit 0, exit 2 under --strict', () => {
    const root = populated();
    for (const inv of [STORE, FORMAT, REBUILD]) {
      const bogus = { ...inv, args: [...inv.args, '--bogus-flag', 'x'] };
      expectFailOpen(invoke(bogus, root), inv.name, /skipped \(pipeline continues\): unknown flag --bogus-flag; see --help/);
      expectStrict((extra, env) => invoke(bogus, root, extra, env), inv.name, /unknown flag --bogus-flag/, 2);
    }
    expectStrict(
      (extra, env) => invoke({ ...STORE, args: ['--issue', 'X'] }, root, extra, env),
      'store-deliberation',
      /--role is required/,
      2,
    );
  });

  it.each([
    ['store-deliberation', [] as string[]],
    ['format-patterns', []],
    ['cairn', ['rebuild']],
    ['cairn', ['events']],
    ['cairn', ['explain']],
  ])('%s %s --help prints usage with an example on stdout, even without a store', (bin, sub) => {
    const root = tempProject({ init: false });
    const r = run(bin, [...sub, '--help'], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^usage: (cairn )?${sub[0] ?? bin}`));
    expect(r.stdout).toMatch(/\nexample:\n +\S/);
  });
});

describe('visible failures', () => {
  it('errors.log and cache/health.json record each fail-open error when the store exists', () => {
    const root = populated();
    const cache = join(root, '.cairn', 'cache');
    expect(existsSync(join(cache, 'errors.log'))).toBe(false);

    invoke({ ...STORE, input: '' }, root);
    const first = JSON.parse(readFileSync(join(cache, 'health.json'), 'utf8'));
    expect(first).toMatchObject({ errors: 1, last_error: 'store-deliberation: the deliberation is empty' });
    expect(first.degraded_since).toBe(first.last_error_at);

    invoke({ ...STORE, input: garbageOf(64) }, root);
    const log = readFileSync(join(cache, 'errors.log'), 'utf8').trimEnd().split('\n');
    expect(log).toHaveLength(2);
    expect(log[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z store-deliberation: the deliberation is empty$/);
    expect(log[1]).toMatch(/^\S+Z store-deliberation: stdin (is not valid UTF-8 text|holds binary data)/);
    const second = JSON.parse(readFileSync(join(cache, 'health.json'), 'utf8'));
    expect(second.errors).toBe(2);
    expect(second.degraded_since).toBe(first.degraded_since);
    expect(second.last_error).toMatch(/^store-deliberation: stdin/);
  });

  it('never appends to errors.log through a symlink planted in the store', () => {
    const root = populated();
    const cache = join(root, '.cairn', 'cache');
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(cache, 'errors.log'));
    const r = invoke({ ...STORE, input: '' }, root);
    expectFailOpen(r, 'store-deliberation', /the deliberation is empty/);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('nothing is written when there is no store to write into', () => {
    const root = tempProject({ init: false });
    invoke(FORMAT, root);
    expect(readdirSync(root)).toEqual(['.git']);
  });
});

function garbageOf(n: number): Buffer {
  const b = seededBytes(n, 3);
  b[0] = 0xfe;
  return b;
}
