#!/usr/bin/env node
// Speed and memory of the knowledge executables (issue 9's targets), measured as bench/run.js measures
// the pattern loop: wall time as a ratio to `node -e 0` in the same run (interleaved rounds, medians),
// CPU time as the cross-check, peak RSS. A markdown report goes to stdout, progress to stderr; it exits
// 1 when a command fails or prints a wrong product.
//
//   npm run bench:knowledge                         100k-entry log, 7 runs each
//   node bench/knowledge.js --entries 1000 --runs 5  a smoke run
//   node bench/knowledge.js --keep                   keep the temporary projects
//   node bench/knowledge.js --without-extra-certs    children without NODE_EXTRA_CA_CERTS (see the report)
//
// The log is generated from the real Lavra data (fixtures/knowledge: 217 entries, 538 comments): each
// entry takes a real note as its body and varies it (a real comment's sentence spliced in, a numbered
// detail), so term statistics are those of real notes and every content is distinct.

import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchSession, measure, runNode, machine, MEMORY_METHOD } from './measure.js';
import { writeKnowledgeLog } from './stores.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIX = join(REPO, 'fixtures', 'knowledge');
const bin = (name) => join(REPO, 'bin', `${name}.js`);
const LOAD_AT_START = machine().load;

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    entries: { type: 'string', default: '100000' },
    keep: { type: 'boolean', default: false },
    // NODE_EXTRA_CA_CERTS makes every node process parse a certificate bundle at start: `node -e 0`
    // then costs twice as much, and every ratio looks better than on a machine without it
    'without-extra-certs': { type: 'boolean', default: false },
  },
});
const { progress, fmt, tempDir, cleanup, fail } = benchSession('knowledge-', { keep: Boolean(opts.keep) });
const RUNS = Number(opts.runs);
const ENTRIES = Number(opts.entries);
if (!Number.isInteger(RUNS) || RUNS < 5) fail('--runs must be an integer ≥ 5');
await import(join(REPO, 'dist', 'lib', 'knowledge', 'entry.js')).catch(() => fail('dist/ is missing: run `npm run build` first'));

const NOW = '2026-04-20T10:00:00.000Z';
const PROJECT = 'benchknowledge';
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('CAIRN_') && !(opts['without-extra-certs'] && k === 'NODE_EXTRA_CA_CERTS')),
  ),
  CAIRN_NOW: NOW,
};
const results = [];

/** A knowledge.jsonl of `n` entries (bench/stores.js), of this bench's project. */
const writeLog = (path, n, seed) => writeKnowledgeLog(path, { entries: n, seed, project: PROJECT, nowMs: Date.parse(NOW) });

/** A git work tree with a store, on branch feat/cursor-hooks. */
function project(tag) {
  const dir = tempDir(tag);
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/feat/cursor-hooks\n');
  mkdirSync(join(dir, '.cairn', 'cache'), { recursive: true });
  mkdirSync(join(dir, '.cairn', 'memory'), { recursive: true });
  // The background sanitiser waits out its interval before it exits (to catch the rest of a burst);
  // a run that waits for it would wait that long: a few seconds here, a minute by default.
  writeFileSync(
    join(dir, '.cairn', 'config.json'),
    JSON.stringify({ project: PROJECT, knowledge: { sanitizeEveryMs: SANITIZE_EVERY_MS } }),
  );
  return dir;
}
const SANITIZE_EVERY_MS = 5000;

function payloadFile(dir, name, payload) {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ session_id: 'bench', cwd: dir, ...payload }));
  return path;
}

const SCOPE = ['--project', PROJECT];
const HOOK_ENV = (extra = {}) => ({ ...env, ...extra });
const checkBlock = (res) => {
  const out = JSON.parse(res.stdout);
  const text = out.hookSpecificOutput?.additionalContext ?? '';
  if (!text.includes('<untrusted-knowledge') || !text.includes('- ['))
    throw new Error(`auto-recall printed no entries:\n${res.stdout.slice(0, 400)}\n${res.stderr}`);
  if (res.stderr) throw new Error(`auto-recall wrote to stderr: ${res.stderr}`);
};

function add(name, m, target, met, note) {
  results.push({ name, m, target, met, note });
}

// ---------------------------------------------------------------------------------------------
// cases

/** Wait until no background `cairn sanitize` started for this store is running (pgrep; else a pause). */
function awaitSanitiser(storeDir) {
  for (let waited = 0; waited < 120_000; waited += 200) {
    const found = spawnSync('pgrep', ['-f', `sanitize .*${storeDir}`], { encoding: 'utf8' });
    if (found.error) return void spawnSync('sleep', ['2']);
    if (found.status !== 0) return;
    spawnSync('sleep', ['0.2']);
  }
}

function captureCases() {
  const dir = project('capture');
  // Rotation keeps the log between 2,500 and 5,000 lines (a capture that finds it over 5,000 rotates it:
  // measured apart, below); the rest of a long-lived store's entries are in the archive.
  const logLines = Math.min(ENTRIES, 4000);
  writeLog(join(dir, '.cairn', 'memory', 'knowledge.jsonl'), logLines, 1);
  if (ENTRIES > logLines) writeLog(join(dir, '.cairn', 'memory', 'knowledge.archive.jsonl'), ENTRIES - logLines, 3);
  const pristine = tempDir('capture-pristine');
  runNode([bin('cairn'), 'recall', '--stats', ...SCOPE, '--strict'], { cwd: dir, env }); // the index exists, as in a store in use
  // a capture before, as in a store in use: the line count rotation keeps, the sanitiser's stamp
  const warm = payloadFile(dir, 'warm', {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'bd comments add lavra-cms "LEARNED: the bench store has seen a capture before"' },
    tool_response: { stdout: 'ok' },
  });
  runNode([bin('memory-capture'), ...SCOPE], { cwd: dir, env, stdinFile: warm });
  awaitSanitiser(join(dir, '.cairn'));
  cpSync(join(dir, '.cairn'), join(pristine, '.cairn'), { recursive: true });
  const trash = tempDir('capture-used');
  let used = 0;
  // A run's background sanitiser may still be writing into its store: it is moved aside, not deleted.
  // The fresh copy is flushed to disk first: a capture that writes while the kernel throttles writers of
  // a 100 MB copy's dirty pages would measure the copy, not itself.
  const restore =
    ({ sanitiserRequested }) =>
    () => {
      if (!sanitiserRequested) awaitSanitiser(join(dir, '.cairn'));
      renameSync(join(dir, '.cairn'), join(trash, String(used++)));
      cpSync(join(pristine, '.cairn'), join(dir, '.cairn'), { recursive: true });
      const stamp = join(dir, '.cairn', 'cache', 'sanitize.requested');
      if (sanitiserRequested) writeFileSync(stamp, '');
      else rmSync(stamp, { force: true });
      spawnSync('sync');
    };

  const ordinary = payloadFile(dir, 'ordinary', {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'npm test -- --reporter dot 2>&1 | tail -20' },
    tool_response: { stdout: 'ok', stderr: '' },
  });
  progress('memory-capture, non-matching payload');
  const m1 = measure({
    runs: RUNS,
    args: [bin('memory-capture'), ...SCOPE],
    cwd: dir,
    env,
    stdinFile: ordinary,
    check: (r) => r.stdout && fail(`printed ${r.stdout}`),
  });
  add('memory-capture, an ordinary shell command (no capture)', m1, '≤ 1.2×', m1.ratio <= 1.2, 'loads neither SQLite nor tiktoken');

  const file = payloadFile(dir, 'capture', {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: {
      command: 'bd comments add lavra-cms "LEARNED: Cursor hooks need workspace_roots, not cwd" && bd close lavra-cms',
    },
    tool_response: { stdout: 'ok' },
  });
  const added = (r) => JSON.parse(r.stdout).captured[0].status === 'added' || fail(r.stdout);
  const store = `${fmt(logLines)}-line log${ENTRIES > logLines ? ` + ${fmt(ENTRIES - logLines)}-line archive` : ''}`;
  progress(`memory-capture, a capture into a ${store}, with its index`);
  const m2 = measure({
    runs: RUNS,
    args: [bin('memory-capture'), ...SCOPE, '--json'],
    cwd: dir,
    env,
    stdinFile: file,
    before: restore({ sanitiserRequested: true }),
    check: added,
  });
  add(
    `memory-capture, one capture (${store}, index updated)`,
    m2,
    '≤ 2.0×',
    m2.ratio <= 2.0,
    'each run on a fresh copy of the store, whose sanitiser was asked for within the minute (so none is started)',
  );
  progress('memory-capture, the first capture of a minute (starts the sanitiser)');
  const m3 = measure({
    runs: RUNS,
    args: [bin('memory-capture'), ...SCOPE, '--json'],
    cwd: dir,
    env,
    stdinFile: file,
    before: restore({ sanitiserRequested: false }),
    check: added,
  });
  add(
    `memory-capture, the first capture of a minute (${store}), which starts the sanitiser`,
    m3,
    '—',
    undefined,
    `at most once per knowledge.sanitizeEveryMs (a minute by default, ${SANITIZE_EVERY_MS} ms here); the sanitiser runs detached, and the next run waits for it to finish`,
  );

  // a capture that finds the log over 5,000 lines rotates it: once every 2,500 captures
  const full = project('capture-rotates');
  writeLog(join(full, '.cairn', 'memory', 'knowledge.jsonl'), 5000, 1);
  runNode([bin('cairn'), 'recall', '--stats', ...SCOPE, '--strict'], { cwd: full, env });
  const fullPristine = tempDir('capture-rotates-pristine');
  cpSync(join(full, '.cairn'), join(fullPristine, '.cairn'), { recursive: true });
  const rotating = payloadFile(full, 'capture', {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'bd comments add lavra-cms "LEARNED: Cursor hooks need workspace_roots, not cwd"' },
    tool_response: { stdout: 'ok' },
  });
  progress('memory-capture, a capture that rotates a 5,000-line log');
  const m4 = measure({
    runs: RUNS,
    args: [bin('memory-capture'), ...SCOPE, '--json'],
    cwd: full,
    env,
    stdinFile: rotating,
    before: () => {
      renameSync(join(full, '.cairn'), join(trash, String(used++)));
      cpSync(join(fullPristine, '.cairn'), join(full, '.cairn'), { recursive: true });
      writeFileSync(join(full, '.cairn', 'cache', 'sanitize.requested'), '');
      spawnSync('sync');
    },
    check: added,
  });
  add(
    'memory-capture, a capture that rotates the log (5,000 lines: 2,501 move to the archive)',
    m4,
    '—',
    undefined,
    'once every 2,500 captures',
  );
}

function recallCases() {
  const dir = project('recall');
  const log = join(dir, '.cairn', 'memory', 'knowledge.jsonl');
  progress(`writing a ${fmt(ENTRIES)}-entry log`);
  writeLog(log, ENTRIES, 2);
  const bytes = readFileSync(log).length;

  // first build of the index, no deadline (what `cairn recall` does on a fresh clone)
  progress('first build of the index');
  const build = runNode([bin('cairn'), 'recall', 'cursor hooks', ...SCOPE, '--strict'], { cwd: dir, env });
  if (build.code !== 0) throw new Error(build.stderr);
  add(
    `first build of the ${fmt(ENTRIES)}-entry index (cairn recall)`,
    null,
    '≤ 10 s',
    build.ms <= 10_000,
    `${fmt(build.ms)} ms wall, ${fmt(build.rssKb / 1024, 1)} MB peak; log ${fmt(bytes / 1e6, 1)} MB`,
  );

  progress('cairn recall');
  const m4 = measure({
    runs: RUNS,
    args: [bin('cairn'), 'recall', 'cursor hooks additional_context', ...SCOPE, '--strict'],
    cwd: dir,
    env,
    check: (r) => r.stdout.startsWith('[') || fail(`recall printed nothing: ${r.stderr}`),
  });
  add(`cairn recall, ${fmt(ENTRIES)}-entry log`, m4, '≤ 2.0×', m4.ratio <= 2.0);

  // The store as a session finds it once it is in use: the first session start has built the working set
  // (the newest lines) and asked for the sanitiser, which has built the active cache and counted the
  // tokens of the lines a session start shows. Run here in the foreground; no run below starts another.
  const session = payloadFile(dir, 'session', { hook_event_name: 'SessionStart', source: 'startup' });
  const stamp = join(dir, '.cairn', 'cache', 'sanitize.requested');
  writeFileSync(stamp, '');
  runNode([bin('auto-recall'), ...SCOPE], { cwd: dir, env, stdinFile: session });
  progress('cairn sanitize (what the first session start asked for in the background)');
  const sanitized = runNode([bin('cairn'), 'sanitize', ...SCOPE, '--strict'], { cwd: dir, env });
  if (sanitized.code !== 0) throw new Error(sanitized.stderr);
  const requested = { before: () => writeFileSync(stamp, '') };
  progress(`auto-recall, ${fmt(ENTRIES)} entries, index built`);
  const m1 = measure({
    runs: RUNS,
    args: [bin('auto-recall'), ...SCOPE],
    cwd: dir,
    env,
    stdinFile: session,
    ...requested,
    check: checkBlock,
  });
  add(
    `auto-recall, ${fmt(ENTRIES)}-entry log, index built`,
    m1,
    '≤ 2.0×, ≤ 100 MB',
    m1.ratio <= 2.0 && m1.peakRssMb <= 100,
    'SessionStart on branch feat/cursor-hooks, no .beads; the active cache is fresh',
  );

  let appended = 0;
  const appendOne = () =>
    appendFileSync(
      log,
      JSON.stringify({
        key: `learned-bench-append-${appended}`,
        type: 'learned',
        content: `bench append ${appended++} about sqlite`,
        source: 'hook',
        tags: ['learned'],
        ts: Date.parse(NOW) / 1000,
        bead: 'lavra-cms',
        project: PROJECT,
      }) + '\n',
    );
  progress('auto-recall after one new append');
  const m2 = measure({
    runs: RUNS,
    args: [bin('auto-recall'), ...SCOPE],
    cwd: dir,
    env,
    stdinFile: session,
    before: () => {
      requested.before();
      appendOne();
    },
    check: checkBlock,
  });
  add(
    `auto-recall, ${fmt(ENTRIES)}-entry log, one line appended before each run (incremental sync)`,
    m2,
    '≤ 2.2×',
    m2.ratio <= 2.2,
    'the active cache is behind the log: the log is read',
  );

  // bd on PATH answering in 20 ms
  mkdirSync(join(dir, '.beads'), { recursive: true });
  const stubBin = tempDir('bd');
  symlinkSync(join(REPO, 'bench', 'bd-stub.sh'), join(stubBin, 'bd'));
  const bdEnv = HOOK_ENV({
    PATH: `${stubBin}:${process.env.PATH}`,
    BD_STUB_ISSUES: join(FIX, 'issues.main-f048edf.jsonl'),
    BD_STUB_DELAY: '0.02',
  });
  runNode([bin('auto-recall'), ...SCOPE], { cwd: dir, env: bdEnv, stdinFile: session });
  progress('auto-recall with bd answering in 20 ms');
  const m3 = measure({
    runs: RUNS,
    args: [bin('auto-recall'), ...SCOPE],
    cwd: dir,
    env: bdEnv,
    stdinFile: session,
    ...requested,
    check: checkBlock,
  });
  add(
    `auto-recall, ${fmt(ENTRIES)}-entry log, bd stub on PATH answering in 20 ms`,
    m3,
    '≤ 2.0×',
    m3.ratio <= 2.0,
    'the six open beads of issues.main-f048edf.jsonl: seven topics searched; both listings started by the gate, and the beads the last session start listed searched while they run',
  );
  rmSync(join(dir, '.beads'), { recursive: true });
}

/** A fresh clone: the log and no database; session starts under the hook deadline until one prints. */
function cloneCase() {
  const dir = project('clone');
  writeLog(join(dir, '.cairn', 'memory', 'knowledge.jsonl'), ENTRIES, 2);
  const session = payloadFile(dir, 'session', { hook_event_name: 'SessionStart', source: 'startup' });
  const walls = [];
  let converged = 0;
  for (let i = 1; i <= 15 && !converged; i++) {
    const res = runNode([bin('auto-recall'), ...SCOPE], {
      cwd: dir,
      env: { ...env, CAIRN_DEADLINE_MS: '2000' },
      stdinFile: session,
    });
    if (res.code !== 0) throw new Error(res.stderr);
    walls.push(res.ms);
    if (res.stdout.includes('untrusted-knowledge')) converged = i;
  }
  awaitSanitiser(join(dir, '.cairn')); // the first block asked for it: it must not weigh on the cases after
  add(
    `fresh clone (${fmt(ENTRIES)}-entry log, no state.db): auto-recall as a session-start hook until it prints`,
    null,
    '≤ 10 invocations, each ≤ 2,500 ms',
    converged > 0 && converged <= 10 && Math.max(...walls) <= 2500,
    `${converged ? `printed at invocation ${converged}` : 'never printed in 15'}; wall ms: ${walls.map((w) => fmt(w)).join(', ')}`,
  );
}

/** The real 217-entry log, beside the figure of the system we replace (21–26 s per session start, SPEC §8). */
function realLogCase() {
  const dir = project('real');
  copyFileSync(join(FIX, 'knowledge.main-f048edf.jsonl'), join(dir, '.cairn', 'memory', 'knowledge.jsonl'));
  const session = payloadFile(dir, 'session', { hook_event_name: 'SessionStart', source: 'startup' });
  const cold = runNode([bin('auto-recall'), ...SCOPE], { cwd: dir, env, stdinFile: session });
  awaitSanitiser(join(dir, '.cairn')); // the first start asked for it; the second finds the lines counted
  progress('auto-recall on the real 217-entry log');
  const m = measure({
    runs: RUNS,
    args: [bin('auto-recall'), ...SCOPE],
    cwd: dir,
    env,
    stdinFile: session,
    check: checkBlock,
  });
  add(
    'auto-recall, the real Lavra log (217 entries)',
    m,
    '(the system we replace: 21–26 s)',
    undefined,
    `first run, building the index: ${fmt(cold.ms)} ms`,
  );
}

// ---------------------------------------------------------------------------------------------

function report() {
  const mc = machine();
  const out = [];
  out.push(
    `Machine: ${mc.cpu}, ${mc.cores} cores, ${mc.platform}, node ${mc.node}; load average at start ${LOAD_AT_START}, at end ${mc.load}.`,
  );
  out.push(
    `${RUNS} runs per case, each after a \`node -e 0\` run; medians. Peak RSS via ${MEMORY_METHOD === 'gnu-time' ? '`/usr/bin/time -f %M`' : '`process.resourceUsage().maxRSS`'}.`,
  );
  out.push(
    `NODE_EXTRA_CA_CERTS ${env.NODE_EXTRA_CA_CERTS ? 'set: every node process, `node -e 0` too, parses a certificate bundle at start, which lowers every ratio (run with --without-extra-certs to compare)' : 'not set'}.`,
    '',
  );
  out.push(
    '| case | wall ms | `node -e 0` ms | wall ratio | CPU ms | CPU ratio | peak RSS MB | target | verdict |',
    '|---|---:|---:|---:|---:|---:|---:|---|---|',
  );
  const verdict = (met) => (met === undefined ? '—' : met ? 'met' : '**missed**');
  for (const r of results) {
    const m = r.m;
    if (!m) out.push(`| ${r.name} | | | | | | | ${r.target} | ${verdict(r.met)} |`);
    else
      out.push(
        `| ${r.name} | ${fmt(m.ms)} | ${fmt(m.baseMs)} | ${fmt(m.ratio, 2)}× | ${fmt(m.cpuMs)} | ${fmt(m.cpuRatio, 2)}× | ${fmt(m.peakRssMb, 1)} | ${r.target} | ${verdict(r.met)} |`,
      );
  }
  out.push('');
  for (const r of results) if (r.note) out.push(`- ${r.name}: ${r.note}`);
  return out.join('\n') + '\n';
}

try {
  captureCases();
  recallCases();
  cloneCase();
  realLogCase();
  process.stdout.write(report());
  const missed = results.filter((r) => r.met === false).length;
  progress(missed ? `${missed} target(s) missed` : 'all targets met');
} catch (err) {
  process.stderr.write(`bench: ${err.stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  cleanup();
}
