#!/usr/bin/env node
// Does cairn's correction loop learn? A simulation of many pipeline runs (an auditor whose
// deliberations mix true checks and recurring false alarms, a curator that dismisses false alarms
// with an error rate), driven through cairn in a pipeline's order, with the correction steps on and
// off. Prints a markdown report on stdout (progress on stderr) and writes bench/learning-results/
// curve.png, curve.csv and results.json. See the "Learning loop" section of bench/README.md.
//
//   npm run bench:learning                         every scenario, library calls
//   node bench/learning.js --processes             also run scenario 1 through bin/*.js and compare
//   node bench/learning.js --error-rate 0.2 --seed 7 --check

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(REPO, 'dist', 'lib', 'patterns', 'feedback.js'))) fail('dist/ is missing: run `npm run build` first');
const { libraryDriver, processDriver } = await import('./learning/drivers.js');
const { simulate, checkPool } = await import('./learning/sim.js');
const { plotPanels, COLORS } = await import('./learning/plot.js');

const { values: opts } = parseOptions({
  runs: { type: 'string', default: '30' },
  seed: { type: 'string', default: '1' },
  seeds: { type: 'string', default: '10' },
  'error-rate': { type: 'string', default: '0.1' },
  'true-dismiss-rate': { type: 'string' },
  budget: { type: 'string', default: '450' },
  'room-budget': { type: 'string', default: '100000' },
  'true-checks': { type: 'string', default: '40' },
  'false-alarms': { type: 'string', default: '20' },
  'echo-rate': { type: 'string', default: '0.8' },
  'notice-true': { type: 'string', default: '6' },
  'notice-false': { type: 'string', default: '3' },
  'alarm-raise-rate': { type: 'string', default: '1' },
  'defect-rate': { type: 'string', default: '0.35' },
  'l1-share': { type: 'string', default: '0.5' },
  'l2-share': { type: 'string', default: '0.25' },
  'pass-base': { type: 'string', default: '0.9' },
  'pass-drop': { type: 'string', default: '0.6' },
  processes: { type: 'boolean', default: false },
  'process-runs': { type: 'string', default: '10' },
  out: { type: 'string', default: join(REPO, 'bench', 'learning-results') },
  check: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
});
if (opts.help) {
  process.stdout.write(`usage: node bench/learning.js [--runs 30] [--seed 1] [--seeds 10] [--error-rate 0.1] [--budget 450]
                          [--processes [--process-runs 10]] [--check] [--out DIR]
model: --true-dismiss-rate (= error rate) --room-budget 100000 --true-checks 40 --false-alarms 20
       --echo-rate 0.8 --notice-true 6 --notice-false 3 --alarm-raise-rate 1 --defect-rate 0.35
       --l1-share 0.5 --l2-share 0.25 --pass-base 0.9 --pass-drop 0.6
--seeds 0 skips the seed and sensitivity sweeps; --check exits 1 when a target is missed.
`);
  process.exit(0);
}

const num = (name, min, max) => {
  const v = Number(opts[name]);
  if (!Number.isFinite(v) || v < min || v > max) fail(`--${name} must be a number in [${min}, ${max}], got '${opts[name]}'`);
  return v;
};
const int = (name, min, max) => {
  const v = num(name, min, max);
  if (!Number.isInteger(v)) fail(`--${name} must be an integer, got '${opts[name]}'`);
  return v;
};

// The model's parameters (the README explains each choice).
const P = {
  runs: int('runs', 1, 1000),
  seed: int('seed', 0, 2 ** 31),
  budget: int('budget', 1, 1e6),
  errorRate: num('error-rate', 0, 1),
  trueDismissRate: num(opts['true-dismiss-rate'] === undefined ? 'error-rate' : 'true-dismiss-rate', 0, 1),
  trueChecks: int('true-checks', 1, 40),
  falseAlarms: int('false-alarms', 1, 20),
  echoRate: num('echo-rate', 0, 1),
  noticeTrue: int('notice-true', 0, 40),
  noticeFalse: int('notice-false', 0, 20),
  alarmRaiseRate: num('alarm-raise-rate', 0, 1),
  defectRate: num('defect-rate', 0, 1),
  l1Share: num('l1-share', 0, 1),
  l2Share: num('l2-share', 0, 1),
  passBase: num('pass-base', 0, 1),
  passDrop: num('pass-drop', 0, 1),
  tracked: null,
  trackedMissedRuns: [],
};
if (P.l1Share + P.l2Share > 1) fail('--l1-share + --l2-share must be at most 1');
const SEEDS = int('seeds', 0, 1000);
const ROOM_BUDGET = int('room-budget', 1, 1e9);
const PROCESS_RUNS = int('process-runs', 1, 1000);
const TARGET_PRECISION = 0.9;
const TARGET_LEAVE_RUN = 15;

const VARIANTS = {
  corrected: { label: 'full loop', feedback: true, outcome: true, scoped: true },
  feedbackOnly: { label: 'feedback only', feedback: true, outcome: false, scoped: true },
  baseline: { label: 'correction off', feedback: false, outcome: false, scoped: true },
  unscoped: { label: 'no echo rule', feedback: true, outcome: true, scoped: false },
};

function run(params, variant, driverFor = libraryDriver) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-learning-'));
  const driver = driverFor(dir);
  try {
    return simulate(driver, params, variant);
  } finally {
    driver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
const progress = (m) => process.stderr.write(`bench:learning: ${m}\n`);

// ---------------------------------------------------------------------------------------------
// Scenario 1: a tight budget (about a third of the candidates fit), 10 % validator error.

progress(`scenario 1: ${P.runs} runs × 3 variants`);
const s1 = {};
for (const key of ['corrected', 'feedbackOnly', 'baseline']) s1[key] = run(P, VARIANTS[key]);

const seedList = Array.from({ length: SEEDS }, (_, i) => i + 1);
const spread = (values) => {
  const v = values.filter((x) => x !== null);
  return { mean: v.reduce((a, b) => a + b, 0) / v.length, min: Math.min(...v), max: Math.max(...v), values };
};
let seeds = null;
if (SEEDS) {
  progress(`scenario 1 over seeds 1…${SEEDS}`);
  const after = (variant) => seedList.map((seed) => run({ ...P, seed }, VARIANTS[variant]).after);
  const corrected = after('corrected');
  const baseline = after('baseline');
  seeds = {
    corrected: spread(corrected.map((a) => a.precision)),
    correctedFalse: spread(corrected.map((a) => a.falseInjected)),
    baseline: spread(baseline.map((a) => a.precision)),
    baselineFalse: spread(baseline.map((a) => a.falseInjected)),
  };
}

// How precision after P.runs runs moves with the validator's error rate and with how often the
// auditor turns a false alarm it mentions into a finding (only findings can be dismissed).
let sensitivity = null;
if (SEEDS) {
  progress('sensitivity sweep');
  const few = seedList.slice(0, Math.min(5, SEEDS));
  const cases = [
    { errorRate: 0, alarmRaiseRate: 1 }, { errorRate: 0.1, alarmRaiseRate: 1 }, { errorRate: 0.2, alarmRaiseRate: 1 },
    { errorRate: 0.3, alarmRaiseRate: 1 }, { errorRate: 0.1, alarmRaiseRate: 0.5 }, { errorRate: 0.1, alarmRaiseRate: 0.25 },
  ];
  sensitivity = {
    seeds: few.length,
    rows: cases.map((c) => {
      const params = (seed) => ({ ...P, ...c, trueDismissRate: c.errorRate, seed });
      const corrected = few.map((seed) => run(params(seed), VARIANTS.corrected).after);
      return { ...c, corrected: spread(corrected.map((a) => a.precision)), correctedFalse: spread(corrected.map((a) => a.falseInjected)) };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Scenario 2: room to spare. F1 (the man-page alarm of the fixtures) is raised in every run; it
// slips past the curator once (run 1), so it gets into the block, then is dismissed in every run.

progress('scenario 2');
const P2 = { ...P, budget: ROOM_BUDGET, tracked: 'F1', trackedMissedRuns: [1] };
const s2 = {};
for (const key of ['corrected', 'feedbackOnly', 'unscoped', 'baseline']) s2[key] = run(P2, VARIANTS[key]);
const s2cold = run({ ...P2, trackedMissedRuns: [] }, VARIANTS.corrected);
const trackedText = checkPool(P.trueChecks, P.falseAlarms).checks.find((c) => c.key === 'F1').text;
function departure(result) {
  const r = result.records;
  const entered = r.find((x) => x.trackedInBlock)?.run ?? null;
  const left = entered === null ? null : (r.find((x) => x.run > entered && !x.trackedInBlock)?.run ?? null);
  const staysOut = left !== null && r.every((x) => x.run < left || !x.trackedInBlock) && !result.after.trackedInBlock;
  const p = result.patterns.find((x) => x.role === 'auditor' && x.text === trackedText);
  return { entered, left, staysOut, state: p && { success: p.success_count, ignores: p.ignore_count, weight: p.ignore_weight, reinforced: p.reinforcement_count } };
}
const s2d = Object.fromEntries(Object.entries(s2).map(([k, v]) => [k, departure(v)]));
// The full loop under other seeds and fixed pass rates: no outcome may hold a dismissed alarm up.
const s2seeds = seedList.map((seed) => departure(run({ ...P2, seed }, VARIANTS.corrected)).left);
const s2passRates = [0.5, 0.25, 0.1].map((passBase) => ({ passBase, left: departure(run({ ...P2, passBase, passDrop: 0 }, VARIANTS.corrected)).left }));

// ---------------------------------------------------------------------------------------------
// Scenario 3: a stream of PASS verdicts whose auditor texts are L3 only; the same stream with L1
// texts is the control that shows the check can fail.

progress('scenario 3');
const P3 = { ...P, errorRate: 0, trueDismissRate: 0, defectRate: 0 };
const maxReinforced = (result) => Math.max(0, ...result.patterns.map((p) => p.reinforcement_count));
const s3 = { l3: run({ ...P3, evidence: 'L3' }, VARIANTS.corrected), l1: run({ ...P3, evidence: 'L1' }, VARIANTS.corrected) };
const s3Stats = Object.fromEntries(
  Object.entries(s3).map(([k, r]) => [k, {
    passes: r.records.filter((x) => x.verdict === 'PASS').length,
    gates: count(r.records.map((x) => x.gate)),
    maxReinforced: maxReinforced(r),
    reinforcedPatterns: r.patterns.filter((p) => p.reinforcement_count > 0).length,
    patterns: r.patterns.length,
  }]),
);

// ---------------------------------------------------------------------------------------------
// The same scenario through the real executables, compared run by run with the library calls.

let agreement = null;
if (opts.processes) {
  const runs = Math.min(PROCESS_RUNS, P.runs);
  progress(`scenario 1 through bin/*.js: ${runs} runs (5 processes each)`);
  const short = { ...P, runs };
  const started = Date.now();
  const viaProcesses = run(short, VARIANTS.corrected, processDriver);
  const seconds = (Date.now() - started) / 1000;
  const viaLibrary = run(short, VARIANTS.corrected);
  const fields = ['ids', 'falseInjected', 'candidates', 'verdict', 'gate', 'penalised', 'reinforced', 'outcome'];
  const differences = [];
  viaLibrary.records.forEach((a, i) => {
    const b = viaProcesses.records[i];
    for (const f of fields) if (JSON.stringify(a[f]) !== JSON.stringify(b[f])) differences.push(`run ${a.run} ${f}: library ${JSON.stringify(a[f])} vs processes ${JSON.stringify(b[f])}`);
  });
  const state = (r) => JSON.stringify(r.patterns.map((p) => [p.id, p.success_count, p.ignore_count, p.ignore_weight, p.reinforcement_count, p.last_used]).sort());
  if (state(viaLibrary) !== state(viaProcesses)) differences.push('final pattern states differ');
  agreement = { runs, seconds, differences };
}

// ---------------------------------------------------------------------------------------------
// Targets

const after = s1.corrected.after;
const targets = [
  {
    name: `precision ≥ ${pct(TARGET_PRECISION)} after ${P.runs} runs at ${pct(P.errorRate)} validator error`,
    measured: `seed ${P.seed}: ${pct(after.precision)} (${after.falseInjected} false alarms in ${after.injected})` +
      (seeds ? `; seeds 1–${SEEDS}: min ${pct(seeds.corrected.min)}, mean ${pct(seeds.corrected.mean)}` : ''),
    pass: after.precision >= TARGET_PRECISION && (!seeds || seeds.corrected.min >= TARGET_PRECISION),
  },
  {
    name: `room to spare: a false alarm raised and dismissed every run leaves the block by run ${TARGET_LEAVE_RUN} (full loop)`,
    measured: s2d.corrected.left === null ? `still in the block after run ${P.runs}` : `leaves at run ${s2d.corrected.left}${s2d.corrected.staysOut ? ', stays out' : ', comes back'}`,
    pass: s2d.corrected.left !== null && s2d.corrected.left <= TARGET_LEAVE_RUN && s2d.corrected.staysOut,
  },
  {
    name: 'an L3-only stream of PASSes reinforces nothing',
    measured: `max reinforcement_count ${s3Stats.l3.maxReinforced} over ${s3Stats.l3.patterns} patterns (${s3Stats.l3.passes} PASS runs); L1 control: ${s3Stats.l1.reinforcedPatterns} patterns reinforced`,
    pass: s3Stats.l3.maxReinforced === 0 && s3Stats.l1.maxReinforced > 0,
  },
];
if (agreement) {
  targets.push({
    name: `library calls and bin/*.js processes agree (${agreement.runs} runs)`,
    measured: agreement.differences.length ? agreement.differences.slice(0, 3).join('; ') : 'identical blocks, verdict handling and final pattern states',
    pass: agreement.differences.length === 0,
  });
}

// ---------------------------------------------------------------------------------------------
// Report

const out = [];
const line = (s = '') => out.push(s);
const first = s1.corrected.records;
const heldLines = mean(s1.baseline.records.slice(Math.floor(P.runs / 2)).map((r) => r.injected));
const baselineCandidates = mean(s1.baseline.records.slice(Math.floor(P.runs / 2)).map((r) => r.candidates));
line(`### Parameters`);
line();
line(`seed ${P.seed}, ${P.runs} runs (one issue each, the clock 1 day further per run), ${P.trueChecks} true checks + ${P.falseAlarms} recurring false alarms, ` +
  `budget ${P.budget} tokens (holds ~${heldLines.toFixed(0)} lines; ${baselineCandidates.toFixed(0)} candidates with correction off ≈ ${(baselineCandidates / heldLines).toFixed(1)}×). ` +
  `Auditor: echoes ${pct(P.echoRate)} of its block, notices ${P.noticeTrue} true checks + ${P.noticeFalse} false alarms outside it per run, ` +
  `turns ${pct(P.alarmRaiseRate)} of the false alarms it lists into findings, breaks a true check (a real finding) in ${pct(P.defectRate)} of runs; ` +
  `evidence L1 ${pct(P.l1Share)} / L2 ${pct(P.l2Share)} / L3 ${pct(1 - P.l1Share - P.l2Share)}. ` +
  `Curator: misses a false alarm with p = ${P.errorRate}, wrongly dismisses a real finding with p = ${P.trueDismissRate}. ` +
  `Outcome: pass with p = ${P.passBase} − ${P.passDrop} × (false-alarm share of the block).`);
line();
line(`### Scenario 1 — tight budget, per run (precision = share of the injected block that are true checks; FA = false alarms injected)`);
line();
line('| run | full loop: precision | FA | feedback only: precision | FA | correction off: precision | FA | candidates (full / off) | evidence | curator | feedback gate | outcome |');
line('|---:|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|:---|:---:|');
first.forEach((r, i) => {
  const f = s1.feedbackOnly.records[i];
  const b = s1.baseline.records[i];
  line(`| ${r.run} | ${pct(r.precision)} | ${r.falseInjected}/${r.injected} | ${pct(f.precision)} | ${f.falseInjected}/${f.injected} | ${pct(b.precision)} | ${b.falseInjected}/${b.injected} | ${r.candidates} / ${b.candidates} | ${r.evidence} | ${r.verdict} | ${r.gate} (−${r.penalised} +${r.reinforced}) | ${r.outcome} |`);
});
const a = (k) => s1[k].after;
line(`| **after ${P.runs}** | **${pct(a('corrected').precision)}** | ${a('corrected').falseInjected}/${a('corrected').injected} | ${pct(a('feedbackOnly').precision)} | ${a('feedbackOnly').falseInjected}/${a('feedbackOnly').injected} | ${pct(a('baseline').precision)} | ${a('baseline').falseInjected}/${a('baseline').injected} | | | | | |`);
line();
const half = s1.corrected.records.slice(Math.floor(P.runs / 2));
const members = (r) => JSON.stringify([...(r?.ids ?? [])].sort());
const turnover = half.filter((r) => members(r) !== members(s1.corrected.records[r.run - 2])).length;
line(`How the full loop holds its precision: ${a('corrected').decayImmune} of the ${a('corrected').injected} patterns of its final block are decay-immune (reinforced ≥ 3×), ` +
  `and the block's membership changed in ${turnover} of runs ${half[0].run}–${P.runs}. False alarms ever reinforced: full loop ${s1.corrected.falseReinforced}, feedback only ${s1.feedbackOnly.falseReinforced}.`);
line();
const allRecords = [...Object.values(s1), ...Object.values(s2)].flatMap((r) => r.records);
line(`Every false positive the curator named was matched to its pattern: ${allRecords.reduce((n, r) => n + r.penalised, 0)} penalties, ` +
  `${allRecords.reduce((n, r) => n + r.unmatched, 0)} unmatched ids over all runs of scenarios 1 and 2.`);
line();
line(`Mean over runs ${Math.floor(P.runs / 2) + 1}–${P.runs}: full loop ${pct(meanPrecision(s1.corrected))}, feedback only ${pct(meanPrecision(s1.feedbackOnly))}, correction off ${pct(meanPrecision(s1.baseline))}.`);
line();
if (seeds) {
  line(`Over seeds 1–${SEEDS}, the block after ${P.runs} runs: full loop precision mean ${pct(seeds.corrected.mean)} (min ${pct(seeds.corrected.min)}, max ${pct(seeds.corrected.max)}), ` +
    `false alarms in it mean ${seeds.correctedFalse.mean.toFixed(1)} (max ${seeds.correctedFalse.max}); correction off mean ${pct(seeds.baseline.mean)} (min ${pct(seeds.baseline.min)}, max ${pct(seeds.baseline.max)}), false alarms mean ${seeds.baselineFalse.mean.toFixed(1)}.`);
  line();
}
if (sensitivity) {
  line(`Sensitivity of the full loop (block after ${P.runs} runs, seeds 1–${sensitivity.seeds}, mean [min]; a real finding is wrongly dismissed at the same error rate; ` +
    'with correction off neither knob matters, since nothing reads the curator):');
  line();
  line('| curator error | false alarms turned into findings | full loop precision | FA in block (mean / max) |');
  line('|---:|---:|---:|---:|');
  for (const r of sensitivity.rows) {
    line(`| ${pct(r.errorRate)} | ${pct(r.alarmRaiseRate)} | ${pct(r.corrected.mean)} [${pct(r.corrected.min)}] | ${r.correctedFalse.mean.toFixed(1)} / ${r.correctedFalse.max} |`);
  }
  line();
}
line(`### Scenario 2 — room to spare (budget ${ROOM_BUDGET}): "${trackedText}" raised in every run, missed by the curator in run 1, dismissed in every later run`);
line();
line('| variant | in the block from run | leaves at run | stays out | successes / ignores / ignore weight at the end |');
line('|:---|---:|---:|:---:|:---|');
for (const [k, d] of Object.entries(s2d)) {
  line(`| ${VARIANTS[k].label}${k === 'corrected' ? ' (the product)' : ''} | ${d.entered ?? '—'} | ${d.left ?? `never (≤ ${P.runs})`} | ${d.left === null ? '—' : d.staysOut ? 'yes' : 'no'} | ${d.state ? `${d.state.success} / ${d.state.ignores} / ${d.state.weight}` : '—'} |`);
}
const cold = departure(s2cold);
line();
if (SEEDS) line(`Full loop over seeds 1–${SEEDS}: leaves at run ${s2seeds.map((x) => x ?? 'never').join(', ')}.`);
line(`Full loop with a fixed pass chance per run: ${s2passRates.map((r) => `${pct(r.passBase)} pass → ${r.left === null ? `never (≤ ${P.runs})` : `leaves at run ${r.left}`}`).join('; ')}.`);
line();
line(`Cold start (dismissed from run 1 on): ${cold.entered === null ? 'never enters the block — the retraction takes its first success back at once' : `in the block from run ${cold.entered}, leaves at run ${cold.left ?? 'never'}`}.`);
line();
line('Its score when each run starts (out = not in the block: below the 0.1 cut, or not yet seen):');
line();
line(`| run | ${Object.keys(s2).map((k) => VARIANTS[k].label).join(' | ')} |`);
line(`|---:|${Object.keys(s2).map(() => '---:').join('|')}|`);
for (let i = 0; i < P.runs; i++) {
  line(`| ${i + 1} | ${Object.values(s2).map((r) => `${r.records[i].trackedScore.toFixed(3)}${r.records[i].trackedInBlock ? '' : ' out'}`).join(' | ')} |`);
}
line();
line(`Other false alarms still in the (unlimited) block after ${P.runs} runs: ${Object.entries(s2).map(([k, r]) => `${VARIANTS[k].label} ${r.after.falseInjected}/${r.after.injected}`).join(', ')}; ` +
  `false alarms ever reinforced: ${Object.entries(s2).map(([k, r]) => `${VARIANTS[k].label} ${r.falseReinforced}`).join(', ')}.`);
line();
line(`### Scenario 3 — a stream of ${P.runs} PASS verdicts`);
line();
line(`L3-only auditor texts: ${s3Stats.l3.passes} PASS runs, feedback gates ${fmtCount(s3Stats.l3.gates)}; highest reinforcement_count of any of the ${s3Stats.l3.patterns} patterns: **${s3Stats.l3.maxReinforced}**. ` +
  `Control, the same stream with L1 texts: gates ${fmtCount(s3Stats.l1.gates)}, ${s3Stats.l1.reinforcedPatterns} patterns reinforced (highest count ${s3Stats.l1.maxReinforced}).`);
line();
if (agreement) {
  line(`### Library calls vs the executables`);
  line();
  line(`Scenario 1 (full loop), ${agreement.runs} runs through bin/format-patterns, store-deliberation (×2), feedback-loop and outcome-score as separate processes (${(agreement.seconds / agreement.runs).toFixed(2)} s per run): ` +
    (agreement.differences.length ? `**differs** from the library run: ${agreement.differences.slice(0, 5).join('; ')}` : 'the same injected ids in every run, the same feedback and outcome per run, and the same final state of every pattern as the library calls.'));
  line();
}
line('### Targets');
line();
line('| target | measured | verdict |');
line('|:---|:---|:---:|');
for (const t of targets) line(`| ${t.name} | ${t.measured} | ${t.pass ? 'PASS' : '**MISS**'} |`);
process.stdout.write(out.join('\n') + '\n');

// ---------------------------------------------------------------------------------------------
// Files

mkdirSync(opts.out, { recursive: true });
const csv = ['scenario,variant,seed,run,injected,true_injected,false_injected,precision,candidates,false_candidates,path,tokens,evidence,findings,curator_verdict,gate,penalised,reinforced,outcome,tracked_in_block,tracked_score'];
const rows = (scenario, results) => {
  for (const [k, r] of Object.entries(results)) {
    for (const x of r.records) {
      csv.push([scenario, k, P.seed, x.run, x.injected, x.trueInjected, x.falseInjected, x.precision?.toFixed(4) ?? '', x.candidates, x.falseCandidates, x.path, x.tokens, x.evidence, x.findings, x.verdict, x.gate, x.penalised, x.reinforced, x.outcome, x.trackedInBlock ?? '', x.trackedScore?.toFixed(4) ?? ''].join(','));
    }
  }
};
rows('tight-budget', s1);
rows('room-to-spare', s2);
rows('l3-pass-stream', { l3: s3.l3, l1Control: s3.l1 });
writeFileSync(join(opts.out, 'curve.csv'), csv.join('\n') + '\n');
writeFileSync(
  join(opts.out, 'results.json'),
  JSON.stringify({ params: { ...P, roomBudget: ROOM_BUDGET, seeds: SEEDS }, targets, scenario1: { after: mapValues(s1, (r) => r.after), seeds, sensitivity }, scenario2: { ...s2d, cold: departure(s2cold), seeds: s2seeds, passRates: s2passRates }, scenario3: s3Stats,
    agreement }, null, 2) + '\n',
);
const series = (result, pick) => result.records.map((r) => [r.run, pick(r)]);
const png = plotPanels(`CAIRN LEARNING LOOP - SEED ${P.seed}, ${pct(P.errorRate)} CURATOR ERROR`, P.runs, [
  {
    title: `1. PRECISION OF THE INJECTED BLOCK (BUDGET ${P.budget})`,
    yMax: 1,
    yTicks: [[0, '0%'], [0.25, '25%'], [0.5, '50%'], [0.75, '75%'], [1, '100%']],
    series: [
      { label: 'FULL LOOP', color: COLORS.blue, points: series(s1.corrected, (r) => r.precision) },
      { label: 'FEEDBACK ONLY', color: COLORS.orange, points: series(s1.feedbackOnly, (r) => r.precision), dash: 8 },
      { label: 'CORRECTION OFF', color: COLORS.red, points: series(s1.baseline, (r) => r.precision) },
    ],
    rules: [{ y: TARGET_PRECISION, color: COLORS.green, label: 'TARGET 90%' }],
  },
  {
    title: '2. FALSE ALARMS INJECTED',
    yMax: Math.max(4, ...s1.baseline.records.map((r) => r.falseInjected)),
    yTicks: ticks(Math.max(4, ...s1.baseline.records.map((r) => r.falseInjected))),
    series: [
      { label: 'FULL LOOP', color: COLORS.blue, points: series(s1.corrected, (r) => r.falseInjected) },
      { label: 'FEEDBACK ONLY', color: COLORS.orange, points: series(s1.feedbackOnly, (r) => r.falseInjected), dash: 8 },
      { label: 'CORRECTION OFF', color: COLORS.red, points: series(s1.baseline, (r) => r.falseInjected) },
    ],
  },
  {
    title: '3. ROOM TO SPARE: SCORE OF A FALSE ALARM DISMISSED EVERY RUN',
    yMax: 1.3,
    yTicks: [[0, '0'], [0.1, '.1'], [0.5, '.5'], [1, '1']],
    series: [
      { label: 'FULL LOOP', color: COLORS.blue, points: series(s2.corrected, (r) => r.trackedScore) },
      { label: 'FEEDBACK ONLY', color: COLORS.orange, points: series(s2.feedbackOnly, (r) => r.trackedScore), dash: 8 },
      { label: 'NO ECHO RULE', color: COLORS.purple, points: series(s2.unscoped, (r) => r.trackedScore) },
      { label: 'CORRECTION OFF', color: COLORS.red, points: series(s2.baseline, (r) => r.trackedScore) },
    ],
    rules: [{ y: 0.1, color: COLORS.green, label: 'CUT 0.1' }, { x: TARGET_LEAVE_RUN, color: COLORS.grey, label: `RUN ${TARGET_LEAVE_RUN}` }],
  },
]);
writeFileSync(join(opts.out, 'curve.png'), png);
progress(`wrote ${join(opts.out, 'curve.png')}, curve.csv, results.json`);
for (const t of targets) progress(`${t.pass ? 'PASS' : 'MISS'}: ${t.name} — ${t.measured}`);
if (opts.check && targets.some((t) => !t.pass)) process.exit(1);

// ---------------------------------------------------------------------------------------------

function pct(x) {
  return x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`;
}
function mean(values) {
  return values.reduce((s, v) => s + v, 0) / values.length;
}
function meanPrecision(result) {
  return mean(result.records.slice(Math.floor(P.runs / 2)).map((r) => r.precision ?? 0));
}
function count(values) {
  const c = {};
  for (const v of values) c[v] = (c[v] ?? 0) + 1;
  return c;
}
function fmtCount(c) {
  return Object.entries(c).map(([k, n]) => `${k} ×${n}`).join(', ');
}
function ticks(max) {
  const step = Math.max(1, Math.ceil(max / 4));
  const out = [];
  for (let v = 0; v <= max; v += step) out.push([v, String(v)]);
  return out;
}
function mapValues(o, f) {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}
function parseOptions(options) {
  try {
    return parseArgs({ options });
  } catch (err) {
    fail(err.message);
  }
}
function fail(message) {
  process.stderr.write(`bench:learning: ${message}\n`);
  process.exit(2);
}
