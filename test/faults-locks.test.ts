import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fixtureText, REPO, run, runAsync, tempProject, type RunResult } from './helpers.js';

// A command a person runs (no deadline of its own) that meets a lock held by another process says
// what holds it at once — in its one stderr line, within about a second — instead of waiting ten
// seconds in silence (twenty for two waits); with a deadline, it waits at most that.

/** A project with a pattern, a knowledge entry and a built index; and the pattern's id. */
function populated(): { root: string; pattern: string } {
  const root = tempProject();
  expect(
    run('store-deliberation', ['--role', 'auditor', '--issue', 'LED-1', '--run', 'r1', '--strict'], {
      cwd: root,
      input: fixtureText('led-101-r1-plan-auditor.md'),
    }).code,
  ).toBe(0);
  writeFileSync(join(root, '.cairn', 'cache', 'sanitize.requested'), ''); // no background sanitiser keeping the database open
  expect(
    run('memory-capture', ['--bead', 'b-1', '--text', 'LEARNED: the ledger totals are computed in cents', '--strict'], {
      cwd: root,
    }).code,
  ).toBe(0);
  expect(run('cairn', ['recall', 'ledger', '--strict'], { cwd: root }).code).toBe(0);
  const pattern = (JSON.parse(run('cairn', ['list', '--json'], { cwd: root }).stdout) as { patterns: { id: string }[] }).patterns[0].id;
  writeFileSync(
    join(root, 'lavra.jsonl'),
    JSON.stringify({
      key: 'fact-x',
      type: 'fact',
      content: 'imported note about invoices',
      tags: [],
      ts: 1_700_000_000,
    }) + '\n',
  );
  return { root, pattern };
}

let holder: ChildProcess;
beforeAll(() => {
  holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
});
afterAll(() => {
  holder.kill();
});

/** Hold SQLite's lock on the store's database exclusively, as a stuck process would; resolves once it holds it. */
function holdDatabase(root: string): Promise<ChildProcess> {
  const script = `const D = require(${JSON.stringify(join(REPO, 'node_modules', 'better-sqlite3'))});
    const db = new D(process.argv[1]); db.pragma('locking_mode = EXCLUSIVE'); db.exec('BEGIN EXCLUSIVE');
    db.prepare('SELECT count(*) FROM sqlite_master').get(); process.stdout.write('held\\n'); setTimeout(() => {}, 600000);`;
  const child = spawn(process.execPath, ['-e', script, join(root, '.cairn', 'cache', 'state.db')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the process holding the database exited (${code})`)));
  });
}

const PERSON_COMMANDS = (pattern: string): { args: string[]; locks: boolean }[] => [
  { args: ['init', '--import-lavra', 'lavra.jsonl'], locks: true },
  { args: ['promote', pattern, '--by', 'ana', '--reason', 'keeps catching gaps'], locks: true },
  { args: ['deprecate', pattern, '--reason', 'obsolete'], locks: true },
  { args: ['list'], locks: false },
  { args: ['explain', pattern], locks: false },
  { args: ['recall', 'ledger'], locks: false },
  { args: ['doctor'], locks: false },
];

/** The wait of a command without a deadline (lib/core/deadline.ts). */
const WAIT_MS = 800;
/** Process start, one step and a loaded machine, as the fault suite allows (test/faults.test.ts). */
const SLACK_MS = 3000;
/** Well under the ten seconds a person waited before. */
const WITHIN_MS = WAIT_MS + SLACK_MS;

async function timed(root: string, args: string[]): Promise<RunResult & { ms: number }> {
  const started = Date.now();
  const r = await runAsync('cairn', args, { cwd: root });
  return { ...r, ms: Date.now() - started };
}

/** One stderr line, naming what holds the lock; exit 0 (nothing is recorded). */
function expectNamed(r: RunResult & { ms: number }, command: string, holds: RegExp): void {
  const about = `cairn ${command} (${r.ms} ms): ${r.stderr}`;
  expect(r.ms, about).toBeLessThan(WITHIN_MS);
  expect(r.code, about).toBe(0);
  expect(r.stderr.trimEnd().split('\n'), about).toHaveLength(1);
  expect(r.stderr, about).toMatch(new RegExp(`^cairn ${command}: skipped \\(pipeline continues\\): .*${holds.source}`));
}

describe('a command a person runs, at a held lock', () => {
  const LOCK_FAULTS: [string, (lock: string) => void, RegExp][] = [
    [
      'held by a live process',
      (lock) => writeFileSync(lock, `${holder.pid} ${hostname()} ${Date.now()}\n`),
      /is held by another process \(pid \d+ on /,
    ],
    ['a directory (`mkdir x.lock`)', (lock) => mkdirSync(lock), /is a directory, not a cairn lock/],
    ['a dangling link', (lock) => symlinkSync('/nonexistent/cairn-lock', lock), /is a symbolic link, not a cairn lock/],
  ];
  it.each(LOCK_FAULTS)('the log lock %s: init, promote and deprecate name it at once', async (_name, plant, holds) => {
    const { root, pattern } = populated();
    for (const lock of ['events.jsonl.lock', 'memory/knowledge.jsonl.lock']) plant(join(root, '.cairn', lock));
    const before = readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8');
    for (const { args } of PERSON_COMMANDS(pattern).filter((c) => c.locks)) expectNamed(await timed(root, args), args[0], holds);
    expect(readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8')).toBe(before);
  });

  it('the database held exclusively by another process: every command names the process at once', async () => {
    const { root, pattern } = populated();
    const db = await holdDatabase(root);
    try {
      const holds = new RegExp(`database is locked \\(SQLITE_BUSY\\).*held by another process \\(pid ${db.pid}: node `);
      for (const { args } of PERSON_COMMANDS(pattern).filter((c) => c.args[0] !== 'init' && c.args[0] !== 'doctor'))
        expectNamed(await timed(root, args), args[0], holds);
      // init's import waits twice (two lookups), then reads the log instead of the index it cannot open (it took 20 s)
      const init = await timed(root, ['init', '--import-lavra', 'lavra.jsonl']);
      expect(init.ms, init.stderr).toBeLessThan(WITHIN_MS + WAIT_MS);
      expect(init.code, init.stderr).toBe(0);
      expect(readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')).toContain('imported note about invoices');
      const doctor = await timed(root, ['doctor']);
      expect(doctor.ms, doctor.stdout).toBeLessThan(WITHIN_MS);
      expect(doctor.stdout).toMatch(new RegExp(`\\n {2}warn {2}database +.*${holds.source}`));
    } finally {
      db.kill();
    }
  });

  it('with a deadline, a command waits up to it, not ten seconds', async () => {
    const { root, pattern } = populated();
    writeFileSync(join(root, '.cairn', 'events.jsonl.lock'), `${holder.pid} ${hostname()} ${Date.now()}\n`);
    const started = Date.now();
    const r = await runAsync('cairn', ['deprecate', pattern, '--reason', 'obsolete'], {
      cwd: root,
      env: { CAIRN_DEADLINE_MS: '1500' },
    });
    const ms = Date.now() - started;
    expect(ms, r.stderr).toBeGreaterThanOrEqual(1500);
    expect(ms, r.stderr).toBeLessThan(1500 + SLACK_MS);
    expect(r.stderr).toMatch(/is held by another process \(pid \d+ on .*; gave up after 1\d\d\d ms/);
  });
});
