#!/usr/bin/env node
// Does cairn's correction loop learn on realistic pipelines? A simulation of many pipeline runs (an
// auditor whose deliberations mix true checks and recurring false alarms, a curator that dismisses
// false alarms with an error rate), driven through cairn in a pipeline's order, with the correction
// steps on and off, in the scenarios of issue 6: paraphrased findings, untested observations, an
// uninformative outcome, runs 4 hours or a day apart, and their combination. Prints a markdown
// report on stdout (progress on stderr) and writes bench/learning-results/ curve.png, curve.csv and
// results.json. See the "Learning loop" section of bench/README.md.
//
// `--world new` runs the harder world instead (bench/world/bench.js, "Learning: the harder world" in
// bench/README.md), `--world all` (the default) both, this one first.
//
//   npm run bench:learning                         every scenario, 10 seeds, library calls; then the harder world
//   node bench/learning.js --world old --processes also run the combined scenario through bin/*.js and compare
//   node bench/learning.js --world old --seeds 3 --only combined --check
//   node bench/learning.js --world new --only combined --seeds 3   (any option of bench/world/bench.js)

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(REPO, 'dist', 'lib', 'patterns', 'feedback.js'))) fail('dist/ is missing: run `npm run build` first');
const WORLD = takeWorldOption();
const HARDER_WORLD = join(REPO, 'bench', 'world', 'bench.js');
if (WORLD === 'new') process.exit(spawnSync(process.execPath, [HARDER_WORLD, ...process.argv.slice(2)], { stdio: 'inherit' }).status ?? 2);
const { libraryDriver, processDriver } = await import('./learning/drivers.js');
const { simulate, checkPool } = await import('./learning/sim.js');
const { plotPanels, COLORS } = await import('./learning/plot.js');
const { linkAccuracy } = await import('./learning/links.js');
const { TUNING, HELD_OUT } = await import('./learning/paraphrases.js');

const { values: opts } = parseOptions({
  runs: { type: 'string', default: '30' },
  seeds: { type: 'string', default: '10' },
  'error-rate': { type: 'string', default: '0.1' },
  budget: { type: 'string', default: '450' },
  'room-budget': { type: 'string', default: '100000' },
  only: { type: 'string' },
  processes: { type: 'boolean', default: false },
  'process-runs': { type: 'string', default: '10' },
  repeats: { type: 'string', default: '10' },
  out: { type: 'string', default: join(REPO, 'bench', 'learning-results') },
  check: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
});
const num = (name, min, max) => {
  const v = Number(opts[name]);
  if (!Number.isFinite(v) || v < min || v > max) fail(`--${name} must be a number in [${min}, ${max}], got '${opts[name]}'`);
  return v;
};
const RUNS = num('runs', 1, 1000);
const SEEDS = num('seeds', 1, 1000);
const REPEATS = num('repeats', 1, 100);
const ROOM_BUDGET = num('room-budget', 1, 1e9);
const PROCESS_RUNS = num('process-runs', 1, 1000);
const TARGET_PRECISION = 0.9;
const TARGET_GAP = 0.3;
const TARGET_LEAVE_RUN = 10;

// The model (bench/README.md explains each choice). Scenarios change a few of these.
const BASE = {
  runs: RUNS,
  seed: 1,
  budget: num('budget', 1, 1e6),
  errorRate: num('error-rate', 0, 1),
  trueDismissRate: num('error-rate', 0, 1),
  trueChecks: 40,
  falseAlarms: 20,
  echoRate: 0.8,
  noticeTrue: 6,
  noticeFalse: 3,
  alarmRaiseRate: 1,
  defectRate: 0.35,
  l1Share: 0.5,
  l2Share: 0.25,
  passBase: 0.9,
  passDrop: 0.6,
  wording: 'verbatim',
  spacingHours: 24,
  outcomeModel: 'block',
  tracked: null,
  trackedMissedRuns: [],
  citeRate: 0,
  wrongCiteRate: 0,
  terseCurator: false,
};

const combined = (wording, raise, hours) => ({
  key: `combined-${wording === 'tuning' ? 'a' : 'b'}-${Math.round(raise * 100)}-${hours}h`,
  label: `combined: ${wording} wording, ${Math.round(raise * 100)} % raised, uninformative outcome, ${hours === 24 ? '1 day' : `${hours} h`} apart`,
  params: { wording, alarmRaiseRate: raise, outcomeModel: 'uninformative', spacingHours: hours },
});
const SCENARIOS = [
  {
    key: 'verbatim',
    label: 'the earlier model (verbatim findings, every listed alarm raised, outcome tracks the block, 1 day apart)',
    params: {},
  },
  { key: 'paraphrased-a', label: '1. paraphrased findings (tuning wording)', params: { wording: 'tuning' } },
  { key: 'paraphrased-b', label: '1. paraphrased findings (held-out wording)', params: { wording: 'held-out' } },
  {
    key: 'untested-50',
    label: '2. untested observations: 50 % of listed alarms raised',
    params: { alarmRaiseRate: 0.5 },
  },
  {
    key: 'untested-25',
    label: '2. untested observations: 25 % of listed alarms raised',
    params: { alarmRaiseRate: 0.25 },
  },
  {
    key: 'uninformative',
    label: '3. uninformative outcome (pass unless a real defect was waved through)',
    params: { outcomeModel: 'uninformative' },
  },
  { key: 'time-4h', label: '4. time: runs 4 hours apart', params: { spacingHours: 4 } },
  combined('tuning', 0.25, 4),
  combined('tuning', 0.25, 24),
  combined('tuning', 0.5, 4),
  combined('tuning', 0.5, 24),
  combined('held-out', 0.25, 4),
  combined('held-out', 0.25, 24),
  combined('held-out', 0.5, 4),
  combined('held-out', 0.5, 24),
  // What if the pipeline asks for citations (format-patterns --ids)? Not a target scenario: the
  // targets are for auditors that word findings their own way; this measures the fix path.
  ...[0.25, 0.5].map((cite) => ({
    key: `cited-b-${Math.round(cite * 100)}`,
    label: `what if (not a target): combined, held-out wording, 25 % raised, 1 day apart, with \`--ids\`: ${Math.round(cite * 100)} % of the findings about a line of the block cite its id, 1 in 20 of those the next line's`,
    params: { ...combined('held-out', 0.25, 24).params, citeRate: cite, wrongCiteRate: 0.05 },
    whatIf: true,
  })),
  // What if the curator gives no reason ("A2 — false positive." and nothing else)? A dismissal is then
  // linked by the finding's words alone: what the held-out wording costs without the reason.
  ...[0.25, 0.5].map((raise) => ({
    key: `terse-b-${Math.round(raise * 100)}`,
    label: `what if (not a target): combined, held-out wording, ${Math.round(raise * 100)} % raised, 1 day apart, the curator gives no reason for a dismissal`,
    params: { ...combined('held-out', raise, 24).params, terseCurator: true },
    whatIf: true,
  })),
];
/** The scenario shown run by run, plotted, repeated for determinism and run through the executables. */
const MAIN = 'combined-b-25-4h';
if (opts.help) {
  process.stdout.write(`usage: node bench/learning.js [--world old|new|all] [--runs 30] [--seeds 10] [--error-rate 0.1] [--budget 450]
                          [--room-budget 100000] [--only KEY[,KEY]] [--repeats 10] [--processes [--process-runs 10]] [--check] [--out DIR]
scenarios (--only): ${SCENARIOS.map((s) => s.key).join(', ')}
--check exits 1 when a target is missed.
--world new takes the options of the harder world instead (node bench/world/bench.js --help); --world all (the default)
runs this world, then the harder one with the same --seeds, --processes and --check.
`);
  process.exit(0);
}

const selected = opts.only ? SCENARIOS.filter((s) => opts.only.split(',').includes(s.key)) : SCENARIOS;
if (selected.length === 0) fail(`--only names no scenario (${SCENARIOS.map((s) => s.key).join(', ')})`);
const main = selected.find((s) => s.key === MAIN) ?? selected[selected.length - 1];

const VARIANTS = {
  full: { label: 'full loop', feedback: true, outcome: true, scoped: true },
  feedbackOnly: { label: 'feedback only', feedback: true, outcome: false, scoped: true },
  off: { label: 'correction off', feedback: false, outcome: false, scoped: true },
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
const seedList = Array.from({ length: SEEDS }, (_, i) => i + 1);
const { checks } = checkPool(BASE.trueChecks, BASE.falseAlarms);
const isTrueCheck = (text) => checks.some((c) => !c.alarm && c.text === text);

// ---------------------------------------------------------------------------------------------
// Matcher accuracy on the hand-written paraphrases (a direct measurement of the links).

// The held-out wording is measured only when a held-out scenario runs (never while tuning on set a).
const heldOutSelected = selected.some((s) => s.params.wording === 'held-out');
progress(`link accuracy on the tuning${heldOutSelected ? ' and held-out' : ''} wording`);
const linksOf = (set) => ({
  ...linkAccuracy(set),
  alarms: linkAccuracy(set, { alarms: true }),
  withReason: linkAccuracy(set, { alarms: true, reason: true }),
});
const links = { tuning: linksOf(TUNING), ...(heldOutSelected ? { heldOut: linksOf(HELD_OUT) } : {}) };

// ---------------------------------------------------------------------------------------------
// Every scenario: tight budget, 10 % curator error, full loop and correction off over the seeds;
// and with room to spare, the man-page alarm (F1) raised and dismissed in every run.

const results = [];
for (const s of selected) {
  progress(`${s.key}: ${SEEDS} seeds × 2 variants, then the tracked alarm`);
  const params = (seed) => ({ ...BASE, ...s.params, seed });
  const full = seedList.map((seed) => run(params(seed), VARIANTS.full));
  const off = seedList.map((seed) => run(params(seed), VARIANTS.off));
  const landed = { rule: 0, summary: 0, wrong: 0 };
  for (const r of full) for (const x of r.records) for (const l of x.landed) landed[l]++;
  const tracked = seedList.map((seed) =>
    departure(run({ ...params(seed), budget: ROOM_BUDGET, tracked: 'F1', trackedMissedRuns: [] }, VARIANTS.full)),
  );
  const missedOnce = departure(run({ ...params(1), budget: ROOM_BUDGET, tracked: 'F1', trackedMissedRuns: [1] }, VARIANTS.full));
  const gaps = full.map((r, i) => r.after.precision - off[i].after.precision);
  results.push({
    key: s.key,
    label: s.label,
    whatIf: Boolean(s.whatIf),
    params: s.params,
    full: spread(full.map((r) => r.after.precision)),
    off: spread(off.map((r) => r.after.precision)),
    gap: { mean: mean(gaps), min: Math.min(...gaps) },
    falseInBlock: spread(full.map((r) => r.after.falseInjected)),
    trueDeprecated: spread(full.map((r) => r.patterns.filter((p) => p.lifecycle === 'deprecated' && isTrueCheck(p.text)).length)),
    landed,
    tracked,
    missedOnce,
    mainRuns: s.key === main.key ? { full: full[0], off: off[0] } : undefined,
  });
}

function departure(result) {
  const r = result.records;
  const entered = r.find((x) => x.trackedInBlock)?.run ?? null;
  const left = entered === null ? null : (r.find((x) => x.run > entered && !x.trackedInBlock)?.run ?? null);
  const staysOut = left !== null && r.every((x) => x.run < left || !x.trackedInBlock) && !result.after.trackedInBlock;
  return { entered, left, staysOut, scores: r.map((x) => x.trackedScore) };
}

// ---------------------------------------------------------------------------------------------
// The main scenario run by run (seed 1), with feedback only as well; the same seed repeated.

progress(`${main.key}: feedback only, and ${REPEATS} repeats of seed 1`);
const mainResult = results.find((r) => r.key === main.key);
const mainParams = { ...BASE, ...main.params, seed: 1 };
const mainRuns = { ...mainResult.mainRuns, feedbackOnly: run(mainParams, VARIANTS.feedbackOnly) };
const fingerprint = (r) => JSON.stringify({ records: r.records, after: r.after });
const reference = fingerprint(mainRuns.full);
const repeats = Array.from({ length: REPEATS }, () => fingerprint(run(mainParams, VARIANTS.full)) === reference).filter(Boolean).length;

// A stream of PASS verdicts whose auditor texts are L3 only reinforces nothing; the same stream
// with L1 texts is the control that shows the check can fail.
progress('L3 stream');
const P3 = { ...mainParams, errorRate: 0, trueDismissRate: 0, defectRate: 0 };
const l3Stats = Object.fromEntries(
  Object.entries({
    l3: run({ ...P3, evidence: 'L3' }, VARIANTS.full),
    l1: run({ ...P3, evidence: 'L1' }, VARIANTS.full),
  }).map(([k, r]) => [
    k,
    {
      passes: r.records.filter((x) => x.verdict === 'PASS').length,
      // what feedback-loop credited on those PASSes (tested or not, SPEC §3.10.1): the gate decides whether anything is
      maxReinforced: Math.max(0, ...r.records.map((x) => x.reinforced)),
      reinforcedPatterns: r.records.reduce((n, x) => n + x.reinforced, 0),
      patterns: r.patterns.length,
    },
  ]),
);

let agreement = null;
if (opts.processes) {
  const runs = Math.min(PROCESS_RUNS, RUNS);
  progress(`${main.key} through bin/*.js: ${runs} runs (5 processes each)`);
  const short = { ...mainParams, runs };
  const started = Date.now();
  const viaProcesses = run(short, VARIANTS.full, processDriver);
  const seconds = (Date.now() - started) / 1000;
  const viaLibrary = run(short, VARIANTS.full);
  const fields = ['ids', 'falseInjected', 'candidates', 'verdict', 'gate', 'penalised', 'reinforced', 'outcome', 'landed'];
  const differences = [];
  viaLibrary.records.forEach((a, i) => {
    const b = viaProcesses.records[i];
    for (const f of fields)
      if (JSON.stringify(a[f]) !== JSON.stringify(b[f]))
        differences.push(`run ${a.run} ${f}: library ${JSON.stringify(a[f])} vs processes ${JSON.stringify(b[f])}`);
  });
  const state = (r) =>
    JSON.stringify(
      r.patterns
        .map((p) => [p.id, p.success_count, p.ignore_count, p.ignore_weight, p.reinforcement_count, p.last_used, p.lifecycle])
        .sort(),
    );
  if (state(viaLibrary) !== state(viaProcesses)) differences.push('final pattern states differ');
  agreement = { runs, seconds, differences };
}

// ---------------------------------------------------------------------------------------------
// Targets

// Never shown at all is the best a dismissed alarm can do; once shown, it must leave by run 10 and stay out.
const leftInTime = (t) => t.entered === null || (t.left !== null && t.left <= TARGET_LEAVE_RUN && t.staysOut);
const leaving = (list) =>
  list.every((t) => t.entered === null)
    ? 'never in the block'
    : list.every((t) => t.entered === null || t.staysOut)
      ? `by run ${Math.max(...list.map((t) => t.left ?? 0))}`
      : 'stays';
// The what-if scenarios are reported beside the others, never judged.
const targeted = results.filter((r) => !r.whatIf);
const verdictOf = (r) => ({
  precision: r.full.min >= TARGET_PRECISION,
  gap: r.gap.mean >= TARGET_GAP,
  leaves: r.tracked.every(leftInTime),
});
const targets = [
  {
    name: `every scenario: block precision ≥ ${pct(TARGET_PRECISION)} after ${RUNS} runs at ${pct(BASE.errorRate)} curator error, in every seed (1–${SEEDS})`,
    measured: targeted.map((r) => `${r.key} ${pct(r.full.min)}`).join(', '),
    pass: targeted.every((r) => verdictOf(r).precision),
  },
  {
    name: `every scenario: ≥ ${TARGET_GAP} above correction off (mean over the seeds)`,
    measured: targeted.map((r) => `${r.key} ${signed(r.gap.mean)}`).join(', '),
    pass: targeted.every((r) => verdictOf(r).gap),
  },
  {
    name: `every scenario: a paraphrased false alarm raised and dismissed in every run leaves the block within ${TARGET_LEAVE_RUN} runs (every seed) and stays out`,
    measured: targeted.map((r) => `${r.key} ${leaving(r.tracked)}`).join(', '),
    pass: targeted.every((r) => verdictOf(r).leaves),
  },
  {
    name: `the same seed gives the same curve (${main.key}, seed 1)`,
    measured: `${repeats} of ${REPEATS} repeats identical`,
    pass: repeats === REPEATS,
  },
  {
    name: 'an L3-only stream of PASSes reinforces nothing',
    measured: `most patterns credited by one PASS ${l3Stats.l3.maxReinforced} over ${l3Stats.l3.patterns} patterns (${l3Stats.l3.passes} PASS runs); L1 control: ${l3Stats.l1.reinforcedPatterns} credits`,
    pass: l3Stats.l3.maxReinforced === 0 && l3Stats.l1.maxReinforced > 0,
  },
];
if (agreement) {
  targets.push({
    name: `library calls and bin/*.js processes agree (${agreement.runs} runs of ${main.key})`,
    measured: agreement.differences.length
      ? agreement.differences.slice(0, 3).join('; ')
      : 'identical blocks, verdict handling and final pattern states',
    pass: agreement.differences.length === 0,
  });
}

// ---------------------------------------------------------------------------------------------
// Report

const out = [];
const line = (s = '') => out.push(s);
line('### Parameters');
line();
line(
  `${RUNS} runs per stream, seeds 1–${SEEDS}; ${BASE.trueChecks} true checks + ${BASE.falseAlarms} recurring false alarms; budget ${BASE.budget} tokens (about a third of the candidates); ` +
    `curator: misses a false alarm with p = ${BASE.errorRate}, wrongly dismisses a real finding with p = ${BASE.trueDismissRate}. ` +
    `Auditor: echoes ${pct(BASE.echoRate)} of its block, notices ${BASE.noticeTrue} true checks + ${BASE.noticeFalse} false alarms outside it per run, breaks a true check (a real finding) in ${pct(BASE.defectRate)} of runs; ` +
    `evidence L1 ${pct(BASE.l1Share)} / L2 ${pct(BASE.l2Share)} / L3 ${pct(1 - BASE.l1Share - BASE.l2Share)}.`,
);
line();
line('### Links: does a paraphrased finding reach its rule?');
line();
/** A table of link accuracy, a row per wording measured: `cells` gives a row's cells after the wording. */
const linkTable = (header, cells) => {
  line(`| wording | ${header.join(' | ')} |`);
  line(`|:---|${header.map(() => '---:').join('|')}|`);
  for (const [k, v] of Object.entries({ 'tuning (set a)': links.tuning, 'held-out (set b)': links.heldOut }))
    if (v) line(`| ${k} | ${cells(v).join(' | ')} |`);
  line();
};
linkTable(['right rule', 'another rule (wrong)', 'no link (own pattern)', 'trials'], (v) => [
  pct1(v.right),
  pct1(v.wrong),
  pct1(v.none),
  v.trials,
]);
line(`Most frequent wrong links — tuning: ${fmtWrong(links.tuning)}${links.heldOut ? `; held-out: ${fmtWrong(links.heldOut)}` : ''}.`);
line();
line(
  "The false alarms' findings alone, as a curator dismisses them: by the finding's words (as stored), and read with the curator's reason (as feedback-loop reads a dismissal):",
);
line();
const three = (a) => `${pct1(a.right)} / ${pct1(a.wrong)} / ${pct1(a.none)}`;
linkTable(['finding alone: right / wrong / none', 'with the reason: right / wrong / none', 'trials'], (v) => [
  three(v.alarms),
  three(v.withReason),
  v.alarms.trials,
]);
line(
  `Wrong links left with the reason — tuning: ${fmtWrong(links.tuning.withReason)}${links.heldOut ? `; held-out: ${fmtWrong(links.heldOut.withReason)}` : ''}.`,
);
line();
line(`### Scenarios (block after ${RUNS} runs; min and mean over seeds 1–${SEEDS})`);
line();
line(
  '| scenario | full loop min | full loop mean | correction off mean | gap (mean / min) | false alarms in block (mean / max) | true checks deprecated (mean / max) | dismissals landed on rule / own summary / wrong rule | dismissed-every-run alarm leaves (worst seed; seed 1 when the curator missed it in run 1) |',
);
line('|:---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  line(
    `| ${r.label} | ${pct(r.full.min)} | ${pct(r.full.mean)} | ${pct(r.off.mean)} | ${signed(r.gap.mean)} / ${signed(r.gap.min)} | ${r.falseInBlock.mean.toFixed(1)} / ${r.falseInBlock.max} | ${r.trueDeprecated.mean.toFixed(1)} / ${r.trueDeprecated.max} | ${r.landed.rule} / ${r.landed.summary} / ${r.landed.wrong} | ${leaving(r.tracked)} (${leaving([r.missedOnce])}) |`,
  );
}
line();
line(`### ${main.label}, seed 1, run by run`);
line();
line(
  '| run | full loop: precision | FA | feedback only: precision | FA | correction off: precision | FA | evidence | curator | feedback gate | outcome | dismissals landed |',
);
line('|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|:---|:---:|:---|');
mainRuns.full.records.forEach((r, i) => {
  const f = mainRuns.feedbackOnly.records[i];
  const b = mainRuns.off.records[i];
  line(
    `| ${r.run} | ${pct(r.precision)} | ${r.falseInjected}/${r.injected} | ${pct(f.precision)} | ${f.falseInjected}/${f.injected} | ${pct(b.precision)} | ${b.falseInjected}/${b.injected} | ${r.evidence} | ${r.verdict} | ${r.gate} (−${r.penalised} +${r.reinforced}) | ${r.outcome} | ${r.landed.join(' ') || '—'} |`,
  );
});
const after = (k) => mainRuns[k].after;
line(
  `| **after ${RUNS}** | **${pct(after('full').precision)}** | ${after('full').falseInjected}/${after('full').injected} | ${pct(after('feedbackOnly').precision)} | ${after('feedbackOnly').falseInjected}/${after('feedbackOnly').injected} | ${pct(after('off').precision)} | ${after('off').falseInjected}/${after('off').injected} | | | | | |`,
);
line();
line(`Determinism: seed 1 of ${main.key} run ${REPEATS} more times: ${repeats} of ${REPEATS} gave the same records and final block.`);
line();
line(
  `L3 stream (${main.key} with no real defects and no curator errors): L3-only auditor texts, ${l3Stats.l3.passes} PASS runs, most patterns credited by one PASS **${l3Stats.l3.maxReinforced}**; ` +
    `the same stream with L1 texts credits ${l3Stats.l1.reinforcedPatterns} times (at most ${l3Stats.l1.maxReinforced} patterns by one PASS).`,
);
line();
if (agreement) {
  line(
    `Library calls vs executables: ${agreement.runs} runs of ${main.key} through bin/format-patterns, store-deliberation (×2), feedback-loop and outcome-score as processes (${(agreement.seconds / agreement.runs).toFixed(2)} s per run): ` +
      (agreement.differences.length
        ? `**differ**: ${agreement.differences.slice(0, 5).join('; ')}`
        : 'the same injected ids, feedback and outcome in every run, and the same final state of every pattern.'),
  );
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
const csv = [
  'scenario,variant,seed,run,injected,false_injected,precision,candidates,evidence,findings,curator_verdict,gate,penalised,reinforced,outcome,landed',
];
for (const [k, r] of Object.entries(mainRuns)) {
  for (const x of r.records) {
    csv.push(
      [
        main.key,
        k,
        1,
        x.run,
        x.injected,
        x.falseInjected,
        x.precision?.toFixed(4) ?? '',
        x.candidates,
        x.evidence,
        x.findings,
        x.verdict,
        x.gate,
        x.penalised,
        x.reinforced,
        x.outcome,
        x.landed.join(' '),
      ].join(','),
    );
  }
}
writeFileSync(join(opts.out, 'curve.csv'), csv.join('\n') + '\n');
writeFileSync(
  join(opts.out, 'results.json'),
  JSON.stringify(
    {
      base: BASE,
      seeds: SEEDS,
      links,
      scenarios: results.map(({ mainRuns: _m, ...r }) => r),
      repeats,
      l3: l3Stats,
      agreement,
      targets,
    },
    null,
    2,
  ) + '\n',
);
const series = (result, pick) => result.records.map((r) => [r.run, pick(r)]);
const trackedMain = mainResult.tracked[0].scores.map((s, i) => [i + 1, s]);
const png = plotPanels(`CAIRN LEARNING LOOP - ${main.key.toUpperCase()}, SEED 1`, RUNS, [
  {
    title: `1. PRECISION OF THE INJECTED BLOCK (BUDGET ${BASE.budget})`,
    yMax: 1,
    yTicks: [
      [0, '0%'],
      [0.25, '25%'],
      [0.5, '50%'],
      [0.75, '75%'],
      [1, '100%'],
    ],
    series: [
      { label: 'FULL LOOP', color: COLORS.blue, points: series(mainRuns.full, (r) => r.precision) },
      {
        label: 'FEEDBACK ONLY',
        color: COLORS.orange,
        points: series(mainRuns.feedbackOnly, (r) => r.precision),
        dash: 8,
      },
      { label: 'CORRECTION OFF', color: COLORS.red, points: series(mainRuns.off, (r) => r.precision) },
    ],
    rules: [{ y: TARGET_PRECISION, color: COLORS.green, label: 'TARGET 90%' }],
  },
  {
    title: '2. FALSE ALARMS INJECTED',
    yMax: Math.max(4, ...mainRuns.off.records.map((r) => r.falseInjected)),
    yTicks: ticks(Math.max(4, ...mainRuns.off.records.map((r) => r.falseInjected))),
    series: [
      { label: 'FULL LOOP', color: COLORS.blue, points: series(mainRuns.full, (r) => r.falseInjected) },
      {
        label: 'FEEDBACK ONLY',
        color: COLORS.orange,
        points: series(mainRuns.feedbackOnly, (r) => r.falseInjected),
        dash: 8,
      },
      { label: 'CORRECTION OFF', color: COLORS.red, points: series(mainRuns.off, (r) => r.falseInjected) },
    ],
  },
  {
    title: '3. ROOM TO SPARE: SCORE OF A FALSE ALARM DISMISSED EVERY RUN',
    yMax: 1.3,
    yTicks: [
      [0, '0'],
      [0.1, '.1'],
      [0.5, '.5'],
      [1, '1'],
    ],
    series: [{ label: 'FULL LOOP', color: COLORS.blue, points: trackedMain }],
    rules: [
      { y: 0.1, color: COLORS.green, label: 'CUT 0.1' },
      { x: TARGET_LEAVE_RUN, color: COLORS.grey, label: `RUN ${TARGET_LEAVE_RUN}` },
    ],
  },
]);
writeFileSync(join(opts.out, 'curve.png'), png);
progress(`wrote ${join(opts.out, 'curve.png')}, curve.csv, results.json`);
for (const t of targets) progress(`${t.pass ? 'PASS' : 'MISS'}: ${t.name} — ${t.measured}`);
let harderWorldStatus = 0;
if (WORLD === 'all') {
  const shared = [
    ...(opts.seeds ? ['--seeds', opts.seeds] : []),
    ...(opts.processes ? ['--processes'] : []),
    ...(opts.check ? ['--check'] : []),
  ];
  harderWorldStatus = spawnSync(process.execPath, [HARDER_WORLD, ...shared], { stdio: 'inherit' }).status ?? 2;
}
if (opts.check && targets.some((t) => !t.pass)) process.exit(1);
if (harderWorldStatus !== 0) process.exit(harderWorldStatus);

// ---------------------------------------------------------------------------------------------

function spread(values) {
  const v = values.filter((x) => x !== null);
  return { mean: mean(v), min: Math.min(...v), max: Math.max(...v) };
}
function pct(x) {
  return x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`;
}
function signed(x) {
  return `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;
}
function pct1(x) {
  return `${(x * 100).toFixed(1)}%`;
}
function mean(values) {
  return values.reduce((s, v) => s + v, 0) / values.length;
}
function fmtWrong(acc) {
  return (
    acc.wrongLinks
      .slice(0, 5)
      .map(([k, n]) => `${k} (${n}/20)`)
      .join(', ') || 'none'
  );
}
function ticks(max) {
  const step = Math.max(1, Math.ceil(max / 4));
  const out = [];
  for (let v = 0; v <= max; v += step) out.push([v, String(v)]);
  return out;
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
/** `--world old|new|all` (default all), taken out of process.argv before the options of this world are read. */
function takeWorldOption() {
  const at = process.argv.findIndex((a) => a === '--world' || a.startsWith('--world='));
  if (at < 0) return 'all';
  const [flag, inline] = process.argv[at].split('=');
  const value = inline ?? process.argv[at + 1];
  process.argv.splice(at, inline === undefined ? 2 : 1);
  if (!['old', 'new', 'all'].includes(value)) fail(`${flag} must be old, new or all, got '${value}'`);
  return value;
}
