#!/usr/bin/env node
// cairn's benchmark: wall time of each executable as a ratio to `node -e 0` measured in the same
// run (interleaved), medians over --runs runs, the child's CPU time and its peak RSS. Prints a
// markdown report on stdout (paste it into bench/README.md); progress goes to stderr. Exits 1 when
// a command fails or prints a wrong product (an empty block would measure nothing).
//
//   npm run bench                       all cases, 7 runs each
//   node bench/run.js --runs 5 --only format --sizes 1000,10000
//   node bench/run.js --profile         also CPU-profile every case that misses its target
//   node bench/run.js --keep            keep the temporary projects (their paths go to stderr)

import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measure, runNode, machine, cleanupMeasure, MEMORY_METHOD } from './measure.js';
import { makeProject, writeEventLog, PROJECT } from './stores.js';
import { deliberationText, patternTexts } from './corpus.js';
import { topSelfTime } from './profile.js';

const LOAD_AT_START = machine().load;
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(REPO, 'bin', `${name}.js`);

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    sizes: { type: 'string', default: '100,1000,10000,100000' },
    only: { type: 'string', default: 'format,store,rebuild' },
    profile: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const RUNS = Number(opts.runs);
if (!Number.isInteger(RUNS) || RUNS < 5) fail('--runs must be an integer ≥ 5 (medians over at least 5 runs)');
const SIZES = opts.sizes.split(',').map(Number);
const ONLY = new Set(opts.only.split(','));
if (!existsSync(join(REPO, 'dist', 'lib', 'cli', 'runner.js'))) fail('dist/ is missing: run `npm run build` first');

// "Now" is pinned so scores (and so the rendered lines and their cached token counts) are the
// same in every run; the stores' events lie in the 30 days before it.
const NOW = '2025-06-01T12:00:00.000Z';
process.env.CAIRN_NOW = NOW;
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAIRN_'))), CAIRN_NOW: NOW };

const temps = [];
function tempDir(tag) {
  const dir = mkdtempSync(join(tmpdir(), `cairn-bench-${tag}-`));
  temps.push(dir);
  return dir;
}
function cleanup() {
  if (opts.keep) process.stderr.write(`kept: ${temps.join(' ')}\n`);
  else for (const dir of temps) rmSync(dir, { recursive: true, force: true });
  cleanupMeasure();
}
function fail(message) {
  cleanupMeasure();
  process.stderr.write(`bench: ${message}\n`);
  process.exit(1);
}
const progress = (message) => process.stderr.write(`bench: ${message}\n`);

/** Copy a store so a run that writes starts from the same state as every other run. */
function restore(from, to) {
  rmSync(join(to, '.cairn'), { recursive: true, force: true });
  cpSync(join(from, '.cairn'), join(to, '.cairn'), { recursive: true, preserveTimestamps: true });
}

/** Build a project's database from its log with one `cairn rebuild` (checked); returns the run. */
function rebuildOnce(dir, expectApplied) {
  const res = runNode([bin('cairn'), 'rebuild', '--project', PROJECT, '--json', '--strict'], { cwd: dir, env });
  if (res.code !== 0) throw new Error(`cairn rebuild failed: ${res.stderr}`);
  const report = JSON.parse(res.stdout);
  if (report.applied !== expectApplied || report.skipped !== 0) throw new Error(`cairn rebuild replayed ${res.stdout.trim()}, expected ${expectApplied} events`);
  return res;
}

const results = []; // {name, m, target, met (undefined: no target), note, and how to run it again for --profile}
const profiles = []; // {name, ms, top}

// ---------------------------------------------------------------------------------------------
// format-patterns

const FORMAT_ARGS = ['--role', 'auditor', '--labels', 'cli', '--files', 'src/cli/status.ts', '--phase', 'plan', '--project', PROJECT, '--strict'];

function checkBlock(res) {
  const lines = res.stdout.split('\n');
  if (lines[0] !== '=== HISTORICAL PATTERNS (auditor) ===' || lines.at(-2) !== '=== END HISTORICAL PATTERNS ===' || lines.length < 8) {
    throw new Error(`format-patterns printed no proper block:\n${res.stdout.slice(0, 400)}\n${res.stderr}`);
  }
  if (res.stderr.trim()) throw new Error(`format-patterns warned: ${res.stderr}`);
}

/** formatPatterns in-process on the warmed store: which fit path, how many lines, and whether tiktoken loaded. */
async function inProcessFormat(dir) {
  const { openStore } = await import('../dist/lib/store/store.js');
  const { formatPatterns } = await import('../dist/lib/patterns/format.js');
  const { Deadline } = await import('../dist/lib/core/deadline.js');
  const { createLogger } = await import('../dist/lib/core/logger.js');
  const { patternDb } = await import('../dist/lib/events/log.js');
  const store = openStore({ root: dir, project: PROJECT }, new Deadline(0), createLogger('bench'), true);
  try {
    const r = formatPatterns(store, { role: 'auditor', issue: null, run: null, labels: ['cli'], files: ['src/cli/status.ts'], phase: 'plan', exactTokens: false });
    const candidates = patternDb(store).prepare(`SELECT count(*) AS n FROM patterns WHERE project = ? AND role IN ('auditor','judge','sentinel') AND lifecycle != 'deprecated'`).get(PROJECT).n;
    return { path: r.path, lines: r.patterns.length, tokens: r.tokens, tokenizerLoaded: r.tokenizerLoaded, candidates };
  } finally {
    store.close();
  }
}

async function formatCases() {
  for (const size of SIZES) {
    const dir = makeProject(tempDir(`format-${size}`));
    const tiny = Math.max(1, Math.round(size / 20));
    progress(`format ${size}: writing the event log`);
    const log = writeEventLog(join(dir, '.cairn', 'events.jsonl'), { patterns: { auditor: size, judge: tiny, sentinel: tiny, curator: tiny }, nowMs: Date.parse(NOW), seed: size });
    progress(`format ${size}: ${log.events} events; building the database`);
    const build = rebuildOnce(dir, log.events);
    const args = [bin('format-patterns'), ...FORMAT_ARGS];
    const cold = runNode(args, { cwd: dir, env }); // warms the token cache
    checkBlock(cold);
    const warm = await inProcessFormat(dir);
    if (warm.tokenizerLoaded) throw new Error(`format ${size}: tiktoken still loads after the warm-up run`);
    progress(`format ${size}: measuring (${RUNS} runs)`);
    const m = measure({ runs: RUNS, args, cwd: dir, env, check: checkBlock });
    const name = `format-patterns, ${size.toLocaleString('en')} patterns${size <= 100 ? ' (startup floor)' : ''}`;
    const note = `${warm.candidates.toLocaleString('en')} candidates, path ${warm.path}, ${warm.lines} lines, tiktoken loaded in a warm run: no (checked in-process; the first, cold run took ${Math.round(cold.ms)} ms); store built by rebuild of ${log.events.toLocaleString('en')} events in ${Math.round(build.ms)} ms`;
    let target = '—';
    let met;
    if (size === 10_000) {
      target = '≤ 2.0× and ≤ 100 MB';
      met = m.ratio <= 2.0 && m.peakRssMb <= 100;
    } else if (size === 100_000) {
      target = '< 1 s (every run)';
      met = m.maxMs < 1000;
    }
    results.push({ name, m, target, met, note, args, cwd: dir });

    if (size === 10_000) {
      // The pipeline's real call names the issue and run, so the injection is recorded (an append + apply).
      const pristine = dir;
      const work = makeProject(tempDir(`format-${size}-inject`));
      const injectArgs = [...args, '--issue', 'LED-9001', '--run', 'r1'];
      progress(`format ${size} --issue/--run: measuring (${RUNS} runs)`);
      const mi = measure({ runs: RUNS, args: injectArgs, cwd: work, env, before: () => restore(pristine, work), check: checkBlock });
      results.push({ name: `format-patterns, ${size.toLocaleString('en')} patterns, --issue/--run (records pattern.injected)`, m: mi, target: '≤ 2.0× and ≤ 100 MB', met: mi.ratio <= 2.0 && mi.peakRssMb <= 100, note: 'each run on a fresh copy of the store', args: injectArgs, cwd: work, before: () => restore(pristine, work) });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// store-deliberation

async function storeCases() {
  const pristine = makeProject(tempDir('store-pristine'));
  progress('store-deliberation: writing a ~1k-pattern store');
  const log = writeEventLog(join(pristine, '.cairn', 'events.jsonl'), { patterns: { auditor: 700, judge: 100, sentinel: 100, curator: 100 }, nowMs: Date.parse(NOW), seed: 7 });
  rebuildOnce(pristine, log.events);
  // This run's auditor prompt got the usual injection, so patterns it brings back are echoes.
  const inject = runNode([bin('format-patterns'), ...FORMAT_ARGS, '--issue', 'LED-9001', '--run', 'r1', '--json'], { cwd: pristine, env });
  if (inject.code !== 0) throw new Error(`format-patterns --json failed: ${inject.stderr}`);
  const injected = JSON.parse(inject.stdout).patterns.map((p) => p.text);
  if (injected.length < 6) throw new Error(`format-patterns injected only ${injected.length} patterns`);

  const stored = log.known.auditor.map((p) => p.text).filter((t) => !injected.includes(t));
  const fresh = patternTexts(40, 4242, new Set(log.known.auditor.map((p) => p.text.toLowerCase())));
  const cases = [
    { label: '5 KB', bytes: 5 * 1024, existing: 2, echoes: 1, paraphrased: 1, new: 4, findingsFromItems: 2 },
    { label: '64 KB', bytes: 64 * 1024, existing: 10, echoes: 4, paraphrased: 4, new: 22, findingsFromItems: 10 },
  ];
  for (const c of cases) {
    // Items: new texts, texts already stored (seen again), injected ones (echoes), reworded ones (merged).
    const items = [
      ...fresh.slice(0, c.new),
      ...stored.slice(0, c.existing),
      ...injected.slice(0, c.echoes),
      ...stored.slice(100, 100 + c.paraphrased).map((t) => `${t} in practice`),
    ];
    const text = deliberationText({ bytes: c.bytes, role: 'auditor', issue: 'LED-9001', run: 'r1', items, findingsFromItems: c.findingsFromItems, seed: c.bytes });
    const input = join(tempDir('store-input'), 'deliberation.md');
    writeFileSync(input, text);
    const work = makeProject(tempDir('store-work'));
    const args = [bin('store-deliberation'), '--role', 'auditor', '--issue', 'LED-9001', '--run', 'r1', '--phase', 'plan', '--iteration', '1', '--labels', 'cli', '--files', 'src/cli/status.ts', '--project', PROJECT, '--json', '--strict'];
    let summary = '';
    const check = (res) => {
      const out = JSON.parse(res.stdout);
      const by = (s) => out.patterns.filter((p) => p.status === s).length;
      const counts = { new: by('new'), seen: by('seen'), merged: by('merged'), echo: by('echo') };
      if (counts.new < c.new || counts.merged < c.paraphrased || counts.seen < c.existing || counts.echo < c.echoes) {
        throw new Error(`store-deliberation ${c.label}: unexpected patterns ${JSON.stringify(counts)}`);
      }
      summary = `${out.patterns.length} patterns (${counts.new} new, ${counts.seen} seen, ${counts.merged} merged, ${counts.echo} echo), evidence ${out.evidence}, verdict ${out.verdict}`;
    };
    const before = () => restore(pristine, work);
    progress(`store-deliberation ${c.label}: measuring (${RUNS} runs)`);
    const m = measure({ runs: RUNS, args, cwd: work, env, stdinFile: input, before, check });
    const name = `store-deliberation, ${c.label} deliberation (${Buffer.byteLength(text).toLocaleString('en')} B), ~1k-pattern store`;
    results.push({ name, m, target: '≤ 2.5×', met: m.ratio <= 2.5, note: `${summary}; each run on a fresh copy of the store (${log.events.toLocaleString('en')} events)`, args, cwd: work, stdinFile: input, before });
  }
}

// ---------------------------------------------------------------------------------------------
// cairn rebuild

async function rebuildCases() {
  const dir = makeProject(tempDir('rebuild'));
  progress('rebuild: writing a 100k-event log');
  const log = writeEventLog(join(dir, '.cairn', 'events.jsonl'), {
    patterns: { auditor: 15000, judge: 10000, sentinel: 8000, curator: 7000, inspector: 6000, lens: 6000 },
    nowMs: Date.parse(NOW),
    seed: 100,
    limit: 100_000,
    resight: 0.3,
  });
  const distinct = Object.values(log.known).reduce((a, l) => a + l.length, 0);
  const mix = Object.entries(log.counts).sort((a, b) => b[1] - a[1]).map(([t, n]) => `${t} ${n}`).join(', ');
  rebuildOnce(dir, log.events); // creates the database once, so the measured runs replace its rows as a real rebuild does
  const args = [bin('cairn'), 'rebuild', '--project', PROJECT, '--json', '--strict'];
  const check = (res) => {
    const report = JSON.parse(res.stdout);
    if (report.applied !== log.events || report.skipped !== 0 || !report.rebuilt) throw new Error(`rebuild replayed ${res.stdout}`);
  };
  progress(`rebuild: measuring over the existing database (${RUNS} runs)`);
  const m = measure({ runs: RUNS, args, cwd: dir, env, check });
  const note = `${distinct.toLocaleString('en')} distinct patterns; ${mix}`;
  results.push({ name: 'cairn rebuild, 100k-event log, over the existing database', m, target: '≤ 5 s', met: m.ms <= 5000, note, args, cwd: dir });
  const noDb = () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, '.cairn', 'cache', `state.db${suffix}`), { force: true });
  };
  progress(`rebuild: measuring from no database (${RUNS} runs)`);
  const mf = measure({ runs: RUNS, args, cwd: dir, env, before: noDb, check });
  results.push({ name: 'cairn rebuild, 100k-event log, no database yet', m: mf, target: '≤ 5 s', met: mf.ms <= 5000, note: 'database file removed before each run', args, cwd: dir, before: noDb });
}

// ---------------------------------------------------------------------------------------------
// report

function profileMissed() {
  for (const r of results.filter((x) => x.met === false)) {
    const profDir = tempDir('prof');
    r.before?.();
    const res = runNode(['--cpu-prof', '--cpu-prof-interval', '200', '--cpu-prof-dir', profDir, ...r.args], { cwd: r.cwd, env, stdinFile: r.stdinFile });
    if (res.code !== 0) throw new Error(`profiling ${r.name} failed: ${res.stderr}`);
    profiles.push({ name: r.name, ms: res.ms, top: topSelfTime(profDir, 15) });
  }
}

const fmt = (n, d = 0) => n.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d });

function report() {
  const mc = machine();
  const out = [];
  out.push(`Machine: ${mc.cpu}, ${mc.cores} cores, ${mc.platform}, node ${mc.node}; load average at start ${LOAD_AT_START}, at end ${mc.load}.`);
  out.push(`${RUNS} runs per case, each after a \`node -e 0\` run; medians. Wall time is the target figure; CPU time (user + system) is the cross-check for a busy host. Peak RSS of the child (the highest of the runs) via ${MEMORY_METHOD === 'gnu-time' ? '`/usr/bin/time -f %M`' : '`process.resourceUsage().maxRSS` from the preload (GNU time not found)'}.`);
  out.push('');
  out.push('| case | wall ms | `node -e 0` ms | wall ratio | min–max ms | CPU ms | CPU ratio | peak RSS MB | target | verdict |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---|---|');
  for (const r of results) {
    const verdict = r.met === undefined ? '—' : r.met ? 'met' : '**missed**';
    const m = r.m;
    out.push(`| ${r.name} | ${fmt(m.ms)} | ${fmt(m.baseMs)} | ${fmt(m.ratio, 2)}× | ${fmt(m.minMs)}–${fmt(m.maxMs)} | ${fmt(m.cpuMs)} | ${fmt(m.cpuRatio, 2)}× | ${fmt(m.peakRssMb, 1)} | ${r.target} | ${verdict} |`);
  }
  out.push('');
  out.push(`\`node -e 0\`: CPU ${fmt(results[0]?.m.baseCpuMs ?? 0)} ms, peak RSS ${fmt(results[0]?.m.baseRssMb ?? 0, 1)} MB.`);
  out.push('');
  for (const r of results) out.push(`- ${r.name}: ${r.note}`);
  for (const p of profiles) {
    out.push('', `CPU profile, ${p.name} (one run, ${fmt(p.ms)} ms wall with the profiler), top self time:`, '', '| self ms | % | function | where |', '|---:|---:|---|---|');
    for (const f of p.top) out.push(`| ${fmt(f.ms, 1)} | ${fmt(f.pct, 1)} | ${f.name} | ${f.where} |`);
  }
  return out.join('\n') + '\n';
}

try {
  if (ONLY.has('format')) await formatCases();
  if (ONLY.has('store')) await storeCases();
  if (ONLY.has('rebuild')) await rebuildCases();
  if (opts.profile) profileMissed();
  process.stdout.write(report());
  const missed = results.filter((r) => r.met === false).length;
  progress(missed ? `${missed} target(s) missed` : 'all targets met');
} catch (err) {
  process.stderr.write(`bench: ${err.stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  cleanup();
}
