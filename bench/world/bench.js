#!/usr/bin/env node
// The harder world (issue 29's proof): does cairn's loop hold up on pipelines as users have them?
// Every hardship of sim.js alone and all combined, each over seeds 1…N with correction on, off and
// the oracle (true links cited), in both wording sets; the targets are judged on the held-out set.
// Prints a markdown report on stdout (progress on stderr) and writes bench/learning-results/world/:
// curves.png (the combined world), hardships.png (every row), curve.csv, results.json.
// See "Learning: the harder world" in bench/README.md.
//
//   node bench/world/bench.js                      every row, 10 seeds, both wording sets, 2 threads
//   node bench/world/bench.js --only combined --seeds 3 --sets held-out
//   node bench/world/bench.js --processes          + the combined world's first runs through bin/*.js, compared

import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { HARDSHIPS, MODEL } = await import('./sim.js');
const { runStream, SETS, LAST } = await import('./stream.js');
const { DRIFT_RUN, TRACKED_ALARM } = await import('./rules.js');
const { plotPanels, COLORS } = await import('../learning/plot.js');

const TARGET = { single: 0.9, gap: 0.35, combined: 0.85, drift: 10, alarm: 5 };
const ROOM_BUDGET = 100000;

const { values: opts } = (() => {
  try {
    return parseArgs({
      options: {
        runs: { type: 'string', default: String(MODEL.runs) },
        seeds: { type: 'string', default: '10' },
        jobs: { type: 'string', default: String(Math.min(2, availableParallelism())) },
        only: { type: 'string' },
        sets: { type: 'string', default: 'tuning,held-out' },
        processes: { type: 'boolean', default: false },
        'process-runs': { type: 'string', default: '6' },
        out: { type: 'string', default: join(REPO, 'bench', 'learning-results', 'world') },
        check: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    fail(err.message);
  }
})();
if (opts.help) {
  process.stdout.write(`usage: node bench/world/bench.js [--runs 30] [--seeds 10] [--jobs 2] [--only ROW[,ROW]]
                          [--sets tuning,held-out] [--processes [--process-runs 6]] [--check] [--out DIR]
rows (--only): ${HARDSHIPS.map((h) => h.key).join(', ')}
--check exits 1 when a target is missed (targets are judged on the held-out set).
`);
  process.exit(0);
}
const num = (name, min, max) => {
  const v = Number(opts[name]);
  if (!Number.isInteger(v) || v < min || v > max) fail(`--${name} must be an integer in [${min}, ${max}], got '${opts[name]}'`);
  return v;
};
const RUNS = num('runs', DRIFT_RUN + 1, 1000);
const SEEDS = num('seeds', 1, 1000);
const JOBS = num('jobs', 1, 64);
const sets = opts.sets.split(',');
if (sets.some((s) => !SETS[s])) fail(`--sets names unknown sets (${Object.keys(SETS).join(', ')})`);
const rows = opts.only ? HARDSHIPS.filter((h) => opts.only.split(',').includes(h.key)) : HARDSHIPS;
if (!rows.length) fail(`--only names no row (${HARDSHIPS.map((h) => h.key).join(', ')})`);
const JUDGED = 'held-out';
const MAIN = rows.find((r) => r.key === 'combined') ?? rows.at(-1);
const mainSet = sets.includes(JUDGED) ? JUDGED : sets[0];
const progress = (m) => process.stderr.write(`bench:learning (world): ${m}\n`);

// ---------------------------------------------------------------------------------------------
// The jobs: every row × set × variant × seed; the tracked alarm with room to spare (held-out, full
// loop); seed 1 of the main row once more, for determinism.

const seeds = Array.from({ length: SEEDS }, (_, i) => i + 1);
const jobs = [];
const base = { runs: RUNS, budget: MODEL.budget };
for (const row of rows) {
  for (const set of sets) {
    for (const variant of ['on', 'off', 'oracle']) {
      for (const seed of seeds) jobs.push({ ...base, row: row.key, set, variant, seed, keep: seed === 1 });
    }
  }
  for (const seed of seeds)
    jobs.push({
      ...base,
      row: row.key,
      set: mainSet,
      variant: 'on',
      seed,
      budget: ROOM_BUDGET,
      tracked: TRACKED_ALARM,
      kind: 'tracked',
      keep: seed === 1,
    });
}
jobs.push({ ...base, row: MAIN.key, set: mainSet, variant: 'on', seed: 1, keep: true, kind: 'repeat' });
// the two-pair rows are the slowest: start them first
const cost = (j) => (HARDSHIPS.find((h) => h.key === j.row).switches.twoPairs ? 2 : 1) * (j.variant === 'off' ? 0.7 : 1);
jobs.sort((a, b) => cost(b) - cost(a));

const started = Date.now();
progress(`${jobs.length} streams of ${RUNS} runs on ${JOBS} thread${JOBS === 1 ? '' : 's'}`);
const results = await runPool(jobs, JOBS);
const seconds = (Date.now() - started) / 1000;
progress(`done in ${Math.round(seconds)} s`);

let agreement = null;
if (opts.processes) {
  const runs = Math.min(num('process-runs', 1, RUNS), RUNS);
  progress(`${MAIN.key} through bin/*.js: ${runs} runs`);
  const job = { ...base, runs, row: MAIN.key, set: mainSet, variant: 'oracle', seed: 1, keep: true };
  const t = Date.now();
  const viaProcesses = runStream({ ...job, driver: 'processes' });
  const processSeconds = (Date.now() - t) / 1000;
  const viaLibrary = runStream(job);
  agreement = {
    runs,
    seconds: processSeconds,
    same: viaProcesses.fingerprint === viaLibrary.fingerprint,
    differences: differences(viaLibrary.records, viaProcesses.records),
  };
}

// ---------------------------------------------------------------------------------------------
// Figures

const streams = (row, set, variant, kind = undefined) =>
  results
    .filter((r) => r.job.row === row && r.job.set === set && r.job.variant === variant && r.job.kind === kind)
    .sort((a, b) => a.job.seed - b.job.seed);
const worst = (list) => (list.some((r) => r.precision === null) ? null : Math.min(...list.map((r) => r.precision)));
const avg = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const figures = rows.map((row) => {
  const bySet = {};
  for (const set of sets) {
    const on = streams(row.key, set, 'on');
    const off = streams(row.key, set, 'off');
    const oracle = streams(row.key, set, 'oracle');
    const gaps = on.map((r, i) => (r.precision ?? 0) - (off[i].precision ?? 0));
    const sum = (list, f) => list.reduce((s, r) => s + f(r), 0);
    bySet[set] = {
      on: { worst: worst(on), mean: avg(on.map((r) => r.precision ?? 0)), seeds: on.map((r) => r.precision) },
      off: { worst: worst(off), mean: avg(off.map((r) => r.precision ?? 0)), seeds: off.map((r) => r.precision) },
      oracle: {
        worst: worst(oracle),
        mean: avg(oracle.map((r) => r.precision ?? 0)),
        seeds: oracle.map((r) => r.precision),
      },
      gap: { worst: Math.min(...gaps), mean: avg(gaps) },
      deprecatedTrue: {
        on: Math.max(...on.map((r) => r.deprecatedTrue.length)),
        oracle: Math.max(...oracle.map((r) => r.deprecatedTrue.length)),
        rules: [...new Set(on.flatMap((r) => r.deprecatedTrue))],
      },
      landed: ['rule', 'own', 'other', 'unknown'].reduce((o, k) => ({ ...o, [k]: sum(on, (r) => r.landed[k]) }), {}),
      landedOracle: ['rule', 'own', 'other', 'unknown'].reduce((o, k) => ({ ...o, [k]: sum(oracle, (r) => r.landed[k]) }), {}),
      junkShare:
        sum(on, (r) => r.junk) /
        Math.max(
          1,
          sum(on, (r) => r.lines),
        ),
      unknown: sum([...on, ...off, ...oracle], (r) => r.unknown),
      drift: row.switches.drift ? driftFigures(on) : null,
      driftOracle: row.switches.drift ? driftFigures(oracle) : null,
      curves: { on: meanCurve(on), off: meanCurve(off), oracle: meanCurve(oracle) },
    };
  }
  const tracked = streams(row.key, mainSet, 'on', 'tracked').map((r) => r.tracked);
  return { key: row.key, label: row.label, switches: row.switches, sets: bySet, tracked: trackedFigures(tracked) };
});
const mainSeed1 = results.find(
  (r) => r.job.row === MAIN.key && r.job.set === mainSet && r.job.variant === 'on' && r.job.seed === 1 && !r.job.kind,
);
const repeat = results.find((r) => r.job.kind === 'repeat');
const deterministic = repeat.fingerprint === mainSeed1.fingerprint;

function meanCurve(list) {
  return Array.from({ length: RUNS }, (_, i) => {
    const ys = list.map((r) => r.curve[i]).filter((y) => y !== null);
    return ys.length ? avg(ys) : null;
  });
}
function driftFigures(list) {
  const left = list.map((r) => r.drift.oldLeft);
  const entered = list.map((r) => r.drift.newEntered);
  return {
    oldInBefore: list.filter((r) => r.drift.oldInBefore).length,
    oldLeftWorst: left.some((x) => x === null) ? null : Math.max(...left),
    newEnteredWorst: entered.some((x) => x === null) ? null : Math.max(...entered),
    seeds: list.length,
  };
}
function trackedFigures(list) {
  if (!list.length) return null;
  const lefts = list.map((t) => t.left);
  return {
    neverIn: list.filter((t) => t.entered === null).length,
    leftWorst: lefts.some((x) => x === null) ? null : Math.max(...lefts),
    seeds: list.length,
  };
}
function differences(a, b) {
  const out = [];
  a.forEach((x, i) => {
    const y = b[i];
    for (const role of Object.keys(x.roles)) {
      for (const f of ['lines', 'findings', 'penalties']) {
        if (JSON.stringify(x.roles[role][f]) !== JSON.stringify(y.roles[role]?.[f])) out.push(`run ${x.run} ${role} ${f}`);
      }
    }
    if (x.outcome !== y.outcome) out.push(`run ${x.run} outcome`);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Targets (held-out)

const heldOutOf = (f) => f.sets[JUDGED];
const singles = figures.filter((f) => f.key !== 'combined' && f.key !== 'base');
const combinedFig = figures.find((f) => f.key === 'combined');
const targets = [];
if (sets.includes(JUDGED)) {
  if (singles.length) {
    targets.push({
      name: `every single hardship: block precision ≥ ${TARGET.single} ` + `(worst of seeds 1–${SEEDS}, last ${LAST} of ${RUNS} runs)`,
      measured: singles.map((f) => `${f.key} ${fmt(heldOutOf(f).on.worst)}`).join(', '),
      pass: singles.every((f) => (heldOutOf(f).on.worst ?? 0) >= TARGET.single),
    });
    // The gap is judged as the earlier world judges it, by the mean over the seeds of each seed's
    // on − off: correction off reaches ~0.7 in a few seeds, where no learner can be 0.35 above it.
    targets.push({
      name: `every single hardship: ≥ ${TARGET.gap} above correction off ` + '(mean over the seeds of on − off; worst seed in brackets)',
      measured: singles.map((f) => `${f.key} ${signed(heldOutOf(f).gap.mean)} (${signed(heldOutOf(f).gap.worst)})`).join(', '),
      pass: singles.every((f) => heldOutOf(f).gap.mean >= TARGET.gap),
    });
  }
  if (combinedFig) {
    targets.push({
      name: `all combined: block precision ≥ ${TARGET.combined} (worst of seeds)`,
      measured: fmt(heldOutOf(combinedFig).on.worst),
      pass: (heldOutOf(combinedFig).on.worst ?? 0) >= TARGET.combined,
    });
  }
  const drifted = figures.filter((f) => heldOutOf(f).drift);
  if (drifted.length) {
    targets.push({
      name:
        `drift: the obsolete rule out of the block and the new rule in within ${TARGET.drift} runs ` +
        `of run ${DRIFT_RUN} (by run ${DRIFT_RUN + TARGET.drift}, every seed)`,
      measured: drifted
        .map(
          (f) => `${f.key}: out ${runOf(heldOutOf(f).drift.oldLeftWorst)}, ` + `in ${runOf(heldOutOf(f).drift.newEnteredWorst, 'never')}`,
        )
        .join('; '),
      pass: drifted.every((f) => {
        const d = heldOutOf(f).drift;
        return (
          d.oldLeftWorst !== null &&
          d.oldLeftWorst <= DRIFT_RUN + TARGET.drift &&
          d.newEnteredWorst !== null &&
          d.newEnteredWorst <= DRIFT_RUN + TARGET.drift
        );
      }),
    });
  }
  targets.push({
    name: 'no true rule deprecated (any row, any seed, correction on)',
    measured: figures.map((f) => `${f.key} ${heldOutOf(f).deprecatedTrue.on}`).join(', '),
    pass: figures.every((f) => heldOutOf(f).deprecatedTrue.on === 0),
  });
}
const trackedRows = figures.filter((f) => f.tracked);
targets.push({
  name:
    `a false alarm raised and dismissed in every run is out of the block within ${TARGET.alarm} runs ` +
    `(from run ${1 + TARGET.alarm} on, room to spare, every seed)`,
  measured: trackedRows
    .map((f) => `${f.key} ${f.tracked.neverIn === f.tracked.seeds ? 'never in' : runOf(f.tracked.leftWorst)}`)
    .join(', '),
  pass: trackedRows.every((f) => f.tracked.leftWorst !== null && f.tracked.leftWorst <= 1 + TARGET.alarm),
});
targets.push({
  name: `the same seed gives the same curve (${MAIN.key}, ${mainSet}, seed 1, run twice)`,
  measured: deterministic ? 'identical records' : 'records differ',
  pass: deterministic,
});
if (agreement) {
  targets.push({
    name: `library calls and bin/*.js processes agree (${agreement.runs} runs of ${MAIN.key}, oracle)`,
    measured: agreement.same ? 'identical records' : agreement.differences.slice(0, 4).join('; ') || 'records differ',
    pass: agreement.same,
  });
}

// ---------------------------------------------------------------------------------------------
// Report

const out = [];
const line = (s = '') => out.push(s);
const row = (cells) => `| ${cells.join(' | ')} |`;
line(`### The harder world: block precision after ${RUNS} runs (last ${LAST} runs averaged; worst of seeds 1–${SEEDS})`);
line();
const setCols = sets.map((s) => (s === JUDGED ? `${s} (judged)` : s));
line(
  row([
    'hardship',
    ...setCols.flatMap((s) => [`on · ${s}`, `off · ${s}`, `oracle · ${s}`]),
    `on − off, ${JUDGED}: mean (worst seed)`,
    `highest off, ${JUDGED}`,
    'verdict',
  ]),
);
line(`|:---|${sets.map(() => '---:|---:|---:').join('|')}|---:|---:|:---:|`);
for (const f of figures) {
  const ho = f.sets[JUDGED];
  const need = f.key === 'combined' ? TARGET.combined : TARGET.single;
  const verdict =
    !ho || f.key === 'base' ? 'control' : ho.on.worst >= need && (f.key === 'combined' || ho.gap.mean >= TARGET.gap) ? 'met' : '**missed**';
  const cells = sets.map((s) => [f.sets[s].on.worst, f.sets[s].off.worst, f.sets[s].oracle.worst].map(fmt).join(' | ')).join(' | ');
  line(
    row([
      f.label,
      cells,
      ho ? `${signed(ho.gap.mean)} (${signed(ho.gap.worst)})` : '—',
      ho ? fmt(Math.max(...ho.off.seeds)) : '—',
      verdict,
    ]),
  );
}
line();
line(
  `Means over the seeds (${mainSet}): ` +
    figures.map((f) => `${f.key} ${['on', 'off', 'oracle'].map((v) => fmt(f.sets[mainSet][v].mean)).join(' / ')}`).join('; ') +
    ' (on / off / oracle).',
);
line();
line(`### Where dismissals landed, drift, deprecations (${mainSet})`);
line();
line(
  row([
    'hardship',
    'dismissals on the rule / on a finding stored as its own pattern / on another rule or a junk line — on',
    '— oracle',
    'junk lines in the block (on)',
    'obsolete rule out, on / oracle (worst)',
    'new rule in, on / oracle (worst)',
    'true rules deprecated (on / oracle)',
    'dismissed-every-run alarm out (worst, room to spare)',
  ]),
);
line('|:---|---:|---:|---:|---:|---:|---:|---:|');
for (const f of figures) {
  const s = f.sets[mainSet];
  const l = (x) => `${x.rule} / ${x.own} / ${x.other + x.unknown}`;
  const drift = s.drift
    ? [
        `${runOf(s.drift.oldLeftWorst)} / ${runOf(s.driftOracle.oldLeftWorst)}`,
        `${runOf(s.drift.newEnteredWorst, 'never')} / ${runOf(s.driftOracle.newEnteredWorst, 'never')}`,
      ]
    : ['—', '—'];
  const tracked = f.tracked ? (f.tracked.neverIn === f.tracked.seeds ? 'never in' : runOf(f.tracked.leftWorst)) : '—';
  line(
    row([
      f.key,
      l(s.landed),
      l(s.landedOracle),
      pct(s.junkShare),
      ...drift,
      `${s.deprecatedTrue.on} / ${s.deprecatedTrue.oracle}` +
        (s.deprecatedTrue.rules.length ? ` (${s.deprecatedTrue.rules.join(', ')})` : ''),
      tracked,
    ]),
  );
}
line();
const unknownLines = figures.reduce((s, f) => s + sets.reduce((t, set) => t + f.sets[set].unknown, 0), 0);
line(
  `Block lines the world never wrote (a bug of the world if not 0): ${unknownLines}. ` +
    `${results.length} streams in ${Math.round(seconds)} s on ${JOBS} thread${JOBS === 1 ? '' : 's'}.`,
);
if (agreement)
  line(
    `Library calls vs executables: ${agreement.runs} runs of ${MAIN.key} (oracle) through bin/*.js ` +
      `in ${agreement.seconds.toFixed(1)} s: ` +
      (agreement.same ? 'identical records.' : `**differ**: ${agreement.differences.slice(0, 5).join('; ')}.`),
  );
line();
line('### Targets (held-out wording)');
line();
line('| target | measured | verdict |');
line('|:---|:---|:---:|');
for (const t of targets) line(`| ${t.name} | ${t.measured} | ${t.pass ? 'met' : '**missed**'} |`);
process.stdout.write(out.join('\n') + '\n');

// ---------------------------------------------------------------------------------------------
// Files

mkdirSync(opts.out, { recursive: true });
writeFileSync(
  join(opts.out, 'results.json'),
  JSON.stringify(
    { model: MODEL, runs: RUNS, seeds: SEEDS, sets, seconds, jobs: JOBS, figures, targets, deterministic, agreement },
    null,
    1,
  ) + '\n',
);
const csv = ['row,set,variant,seed,run,precision,lines,holding,junk,outcome'];
for (const r of results.filter((x) => x.records && !x.job.kind)) {
  for (const x of r.records)
    csv.push(
      [
        r.job.row,
        r.job.set,
        r.job.variant,
        r.job.seed,
        x.run,
        x.precision?.toFixed(4) ?? '',
        x.lines,
        x.holding,
        x.junk,
        x.outcome ?? '',
      ].join(','),
    );
}
writeFileSync(join(opts.out, 'curve.csv'), csv.join('\n') + '\n');

const PCT_TICKS = [
  [0, '0%'],
  [0.25, '25%'],
  [0.5, '50%'],
  [0.75, '75%'],
  [1, '100%'],
];
const points = (curve) => curve.map((y, i) => [i + 1, y]);
const variantSeries = (c) => [
  { label: 'CORRECTION ON', color: COLORS.blue, points: points(c.on) },
  { label: 'ORACLE LINKS', color: COLORS.green, points: points(c.oracle), dash: 8 },
  { label: 'CORRECTION OFF', color: COLORS.red, points: points(c.off) },
];
const seed1 = (variant) =>
  results.find((r) => r.job.row === MAIN.key && r.job.set === mainSet && r.job.variant === variant && r.job.seed === 1 && !r.job.kind);
const trackedSeed1 = results.find((r) => r.job.row === MAIN.key && r.job.kind === 'tracked' && r.job.seed === 1);
const mainTarget = MAIN.key === 'combined' ? TARGET.combined : TARGET.single;
writeFileSync(
  join(opts.out, 'curves.png'),
  plotPanels(`CAIRN, THE HARDER WORLD - ${MAIN.key.toUpperCase()}, ${mainSet.toUpperCase()} WORDING`, RUNS, [
    {
      title: `1. BLOCK PRECISION, SEED 1 (BUDGET ${MODEL.budget})`,
      yMax: 1,
      yTicks: PCT_TICKS,
      series: variantSeries({ on: seed1('on').curve, off: seed1('off').curve, oracle: seed1('oracle').curve }),
      rules: [{ y: mainTarget, color: COLORS.grey, label: `TARGET ${Math.round(mainTarget * 100)}%` }],
    },
    {
      title: `2. BLOCK PRECISION, MEAN OF SEEDS 1-${SEEDS}`,
      yMax: 1,
      yTicks: PCT_TICKS,
      series: variantSeries(figures.find((f) => f.key === MAIN.key).sets[mainSet].curves),
      rules: [{ y: mainTarget, color: COLORS.grey, label: `TARGET ${Math.round(mainTarget * 100)}%` }],
    },
    {
      title: '3. IN THE BLOCK (1) OR NOT (0), SEED 1',
      yMax: 1.2,
      yTicks: [
        [0, 'OUT'],
        [1, 'IN'],
      ],
      series: [
        ...(MAIN.switches.drift
          ? [
              {
                label: 'OBSOLETE RULE',
                color: COLORS.orange,
                points: seed1('on').records.map((r) => [r.run, r.driftOldIn ? 1 : 0]),
              },
              {
                label: 'NEW RULE',
                color: COLORS.purple,
                points: seed1('on').records.map((r) => [r.run, r.driftNewIn ? 1.1 : 0.1]),
                dash: 6,
              },
            ]
          : []),
        ...(trackedSeed1
          ? [
              {
                label: 'ALARM (ROOM)',
                color: COLORS.red,
                points: trackedSeed1.records.map((r) => [r.run, r.trackedIn ? 0.9 : 0.05]),
                dash: 3,
              },
            ]
          : []),
      ],
      rules: MAIN.switches.drift
        ? [
            { x: DRIFT_RUN, color: COLORS.grey, label: `DRIFT, RUN ${DRIFT_RUN}` },
            { x: DRIFT_RUN + TARGET.drift, color: COLORS.green, label: `RUN ${DRIFT_RUN + TARGET.drift}` },
          ]
        : [],
    },
  ]),
);
writeFileSync(
  join(opts.out, 'hardships.png'),
  plotPanels(
    `HARDER WORLD - MEAN PRECISION PER RUN, ${mainSet.toUpperCase()}, SEEDS 1-${SEEDS}`,
    RUNS,
    figures.map((f, i) => ({
      title: `${i + 1}. ${f.label.toUpperCase().replace(/[^A-Z0-9 %.,:/()=+<>-]/g, '')}`,
      yMax: 1,
      yTicks: PCT_TICKS,
      series: variantSeries(f.sets[mainSet].curves),
      rules: [{ y: f.key === 'combined' ? TARGET.combined : TARGET.single, color: COLORS.grey, label: 'TARGET' }],
    })),
  ),
);
progress(`wrote ${join(opts.out, 'curves.png')}, hardships.png, curve.csv, results.json`);
for (const t of targets) progress(`${t.pass ? 'MET' : 'MISSED'}: ${t.name} — ${t.measured}`);
if (opts.check && targets.some((t) => !t.pass)) process.exit(1);

// ---------------------------------------------------------------------------------------------

async function runPool(list, threads) {
  const queue = [...list];
  const done = [];
  let failed = null;
  const worker = () =>
    new Promise((resolveAll) => {
      const w = new Worker(new URL('./worker.js', import.meta.url));
      const next = () => {
        const job = failed ? undefined : queue.shift();
        if (!job) return w.terminate().then(resolveAll);
        w.postMessage(job);
      };
      w.on('message', (m) => {
        if (m.ok) {
          done.push(m.result);
          if (done.length % 50 === 0) progress(`${done.length}/${list.length} streams`);
        } else failed = m.error;
        next();
      });
      w.on('error', (err) => {
        failed = String(err.stack ?? err);
        resolveAll();
      });
      next();
    });
  await Promise.all(Array.from({ length: Math.min(threads, list.length) }, worker));
  if (failed) fail(failed);
  return done;
}
function fmt(x) {
  return x === null || x === undefined ? '—' : x.toFixed(2);
}
function pct(x) {
  return `${Math.round(x * 100)}%`;
}
function signed(x) {
  return `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;
}
function runOf(x, none = 'stays in') {
  return x === null ? none : `run ${x}`;
}
function fail(message) {
  process.stderr.write(`bench:learning (world): ${message}\n`);
  process.exit(2);
}
