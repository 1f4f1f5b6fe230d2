// One stream of pipeline runs in the harder world, in a pipeline's order per run and per pair:
//   format-patterns (--issue/--run: the block goes into the adversary's prompt) → the adversary's
//   deliberation is stored → the validator's is stored → feedback-loop; then, when both pairs are
//   done, outcome-score. Runs are 4 hours apart (CAIRN_NOW). Correction off is the same world
//   without feedback-loop and outcome-score; the oracle is the full loop whose adversary cites, in
//   each finding, the ids of the patterns that state the finding's rule ("patterns": [...], SPEC
//   §3.9.1) — the loop given the true links.
//
// The adversary is shaped by its block, plainly: it echoes each block line in its Accumulated
// Patterns with p = echo, lists the rules it half-remembers (not in the block) with the rule's list
// rate, and raises a finding about a rule whose situation arises in the run (a real defect for a true
// rule, a tempting case for a false one) with p = raise.block when the rule is in its block,
// raise.listed when it listed it from memory, raise.unlisted otherwise. The validator keeps real
// defects and dismisses false alarms, wrong with p = noise (the noise hardship). The outcome fails
// with p = 1 − (1 − q)^missed, missed = real defects of the run not raised and kept.
//
// Randomness is common random numbers (uniform() of ../learning/sim.js, a hash of its keys): every
// draw is a function of (seed, run, role, what, which rule — or which block line, for echoes), so the
// variants and the two wording sets see the same defects, temptations and validator errors, and differ
// only where cairn's blocks do.

import { uniform } from '../learning/sim.js';
import { adversaryText, validatorText, placeOf, severityOf } from './agents.js';
import { listWordings, issueOf } from './lexicon.js';
import { PAIRS, RULES, RULE, DRIFT_RUN, DRIFT_OLD, DRIFT_NEW, TRACKED_ALARM, trueAt, activeAt } from './rules.js';

const START = Date.parse('2026-03-02T08:00:00Z');
const HOUR_MS = 3_600_000;

/** The model's constants (bench/README.md, "Learning: the harder world", says why each). */
export const MODEL = {
  runs: 30,
  hoursApart: 4,
  budget: 300,
  echo: 0.7,
  list: {
    head: [0.3, 0.25],
    twins: [0.3, 0.3],
    vocab: [0.3, 0.3],
    tail: [0.3, 0.3],
    'drift-old': [0.25, 0.25],
    'drift-new': [0.25, 0.25],
  },
  // [false rule, true rule]: how often the rule's situation arises in a run
  arises: { head: [0.3, 0.2], twins: [0.3, 0.2], vocab: [0.3, 0.2], 'drift-old': [0.4, 0.4], 'drift-new': [0.4, 0.4] },
  tailArises: 0.25, // divided by the rule's rank: a Zipf tail
  raise: { block: 0.9, listed: 0.6, unlisted: 0.3 },
  rewordMemory: 0.7,
  rewordEcho: 0.3,
  evidence: { L1: 0.5, L2: 0.3 },
  noise: 0.1,
  reasonsSometimes: 0.5,
  outcomeFail: { informative: 0.5, passing: 0.1 },
  grouped: 0.3,
  provenance: 0.15,
};

/** The base world: every hardship off. */
export const BASE = {
  reasons: 'fixed',
  twins: false,
  rewordings: false,
  tail: false,
  markdown: false,
  vocab: false,
  twoPairs: false,
  drift: false,
  noise: false,
  passing: false,
};

/** Each hardship alone (a row of the bench), and all of them combined. */
export const HARDSHIPS = [
  { key: 'base', label: 'no hardship (the base world)', switches: {} },
  { key: 'reasons-none', label: 'validator gives no reasons', switches: { reasons: 'none' } },
  { key: 'reasons-varied', label: 'validator reasons worded differently each run', switches: { reasons: 'varied' } },
  { key: 'reasons-sometimes', label: 'validator reasons half the time', switches: { reasons: 'sometimes' } },
  { key: 'twins', label: 'identifier families with near-miss twins of opposite truth', switches: { twins: true } },
  { key: 'rewordings', label: 'rules reworded in Accumulated Patterns lists', switches: { rewordings: true } },
  { key: 'tail', label: 'a Zipf tail of rules listed often, raised rarely', switches: { tail: true } },
  { key: 'markdown', label: 'markdown as agents write it', switches: { markdown: true } },
  { key: 'vocab', label: 'a vocabulary gap between rule, findings and reasons', switches: { vocab: true } },
  { key: 'two-pairs', label: 'two adversarial/validator pairs in one store', switches: { twoPairs: true } },
  {
    key: 'drift',
    label: `drift at run ${DRIFT_RUN}: a true rule turns false, a new one appears`,
    switches: { drift: true },
  },
  { key: 'noise', label: '10 % wrong verdicts', switches: { noise: true } },
  { key: 'passing', label: 'outcomes mostly passing', switches: { passing: true } },
  {
    key: 'combined',
    label: 'all combined (reasons half the time)',
    switches: {
      reasons: 'sometimes',
      twins: true,
      rewordings: true,
      tail: true,
      markdown: true,
      vocab: true,
      twoPairs: true,
      drift: true,
      noise: true,
      passing: true,
    },
  },
];

export const VARIANTS = {
  on: { correction: true, oracle: false },
  off: { correction: false, oracle: false },
  oracle: { correction: true, oracle: true },
};

function inWorld(rule, sw) {
  if (rule.role === 'sentinel' && !sw.twoPairs) return false;
  return { head: true, twins: sw.twins, vocab: sw.vocab, tail: sw.tail, 'drift-old': sw.drift, 'drift-new': sw.drift }[rule.group];
}

/** How often a rule's situation arises in a run. */
function arises(rule) {
  if (rule.group === 'tail') return MODEL.tailArises / rule.rank;
  return MODEL.arises[rule.group][rule.truth ? 1 : 0];
}

/** Raised and dismissed in every run by construction: the tracked alarm, and the obsolete rule after the drift. */
function alwaysDismissed(rule, run, tracked) {
  return rule.key === tracked || (rule.group === 'drift-old' && run >= DRIFT_RUN);
}

/**
 * One stream. driver: ../learning/drivers.js; lexicon: the world's text → rule map (lexicon.js);
 * o: {seed, runs, budget, switches, set (a wording set), variant (VARIANTS), tracked (a rule key or null)}.
 * Returns {records (one per run), final: {deprecatedTrue, patterns}}.
 */
export function simulate(driver, lexicon, o) {
  const sw = { ...BASE, ...o.switches };
  const pairs = sw.twoPairs ? PAIRS : PAIRS.slice(0, 1);
  const rules = RULES.filter((r) => inWorld(r, sw));
  const records = [];
  for (let run = 1; run <= o.runs; run++) {
    const now = new Date(START + (run - 1) * MODEL.hoursApart * HOUR_MS).toISOString();
    const issue = issueOf(run);
    const record = { run, roles: {}, missed: 0 };
    for (const pair of pairs) {
      const draw = (what, key = '') => uniform(o.seed, run, pair.adversary, what, key);
      const pick = (what, n) => Math.floor(draw(`pick-${what}`) * n);
      const block = driver.format({ now, issue, run: 'r1', budget: o.budget, role: pair.adversary });
      const lines = block.patterns.map((p) => ({ ...p, ...judge(lexicon, p.text, run) }));
      const inBlock = new Set(lines.map((l) => l.rule).filter(Boolean));
      const cite = o.variant.oracle ? citations(driver, lexicon, now, pair.adversary) : null;

      // The adversary: Accumulated Patterns (echoes, then what it half-remembers), then findings.
      const own = rules.filter((r) => r.role === pair.adversary && activeAt(r, run));
      const items = [];
      for (const l of lines) {
        if (draw('echo', l.id) >= MODEL.echo) continue;
        const reword = sw.rewordings && l.rule && draw('echo-reword', l.id) < MODEL.rewordEcho;
        items.push({ text: reword ? wordingOf(RULE.get(l.rule), o.set, draw) : l.text, rule: l.rule });
      }
      for (const r of own) {
        if (inBlock.has(r.key) || draw('list', r.key) >= MODEL.list[r.group][r.truth ? 1 : 0]) continue;
        items.push({
          text: sw.rewordings && draw('reword', r.key) < MODEL.rewordMemory ? wordingOf(r, o.set, draw) : r.text,
          rule: r.key,
        });
      }
      const listed = new Set(items.map((it) => it.rule));
      const findings = [];
      for (const r of own) {
        const forced = alwaysDismissed(r, run, o.tracked);
        if (!forced && draw('arises', r.key) >= arises(r)) continue;
        const p = inBlock.has(r.key) ? MODEL.raise.block : listed.has(r.key) ? MODEL.raise.listed : MODEL.raise.unlisted;
        const real = trueAt(r, run);
        if (!forced && draw('raise', r.key) >= p) {
          if (real) record.missed++;
          continue;
        }
        const fpick = (what, n) => Math.floor(draw(`pick-${what}`, r.key) * n);
        const wordings = o.set.rules[r.key].findings;
        findings.push({
          id: `${pair.prefix}${findings.length + 1}`,
          rule: r.key,
          real,
          forced,
          severity: severityOf(fpick),
          summary: wordings[fpick('finding', wordings.length)],
          place: placeOf(r, fpick),
          patterns: cite?.get(r.key),
        });
      }
      const u = draw('evidence');
      const evidence = u < MODEL.evidence.L1 ? 'L1' : u < MODEL.evidence.L1 + MODEL.evidence.L2 ? 'L2' : 'L3';
      const style = sw.markdown ? 'markdown' : 'plain';
      const text = adversaryText({
        role: pair.adversary,
        issue,
        phase: pair.phase,
        findings,
        items: decorate(items, sw, o.set, run, draw),
        evidence,
        style,
        set: o.set,
        pick,
      });
      driver.store({ now, role: pair.adversary, issue, run: 'r1', text });

      // The validator.
      const verdicts = findings.map((f) => {
        const wrong = !f.forced && sw.noise && draw('wrong', f.rule) < MODEL.noise;
        const kept = f.forced ? false : f.real !== wrong;
        return { ...f, kept, wrong, reason: kept ? null : reasonFor(f, sw, o.set, draw) };
      });
      for (const v of verdicts) if (v.real && !v.kept) record.missed++;
      const vtext = validatorText({
        role: pair.validator,
        adversary: pair.adversary,
        issue,
        verdicts,
        style,
        set: o.set,
        pick,
      });
      driver.store({ now, role: pair.validator, issue, run: 'r1', text: vtext });

      const fb = o.variant.correction
        ? driver.feedback({ now, issue, run: 'r1', adversarialRole: pair.adversary, validatorRole: pair.validator })
        : null;
      record.roles[pair.adversary] = {
        lines: lines.map(({ id, rule, kind, holds }) => ({ id, rule, kind, holds })),
        evidence,
        findings: verdicts.map(({ id, rule, real, kept, wrong }) => ({ id, rule, real, kept, wrong })),
        cited: findings.filter((f) => f.patterns?.length).length,
        penalties: fb
          ? fb.penalties.map((x) => ({
              finding: x.finding,
              rule: verdicts.find((v) => v.id === x.finding)?.rule,
              landed: lexicon.lookup(x.text) ?? null,
            }))
          : [],
      };
    }
    if (o.variant.correction) {
      const q = sw.passing ? MODEL.outcomeFail.passing : MODEL.outcomeFail.informative;
      record.outcome = uniform(o.seed, run, 'outcome') < 1 - (1 - q) ** record.missed ? 'fail' : 'pass';
      driver.outcome({ now, issue, run: 'r1', result: record.outcome });
    }
    records.push(summarise(record));
  }
  const end = new Date(START + (o.runs - 1) * MODEL.hoursApart * HOUR_MS).toISOString();
  const patterns = driver.inspect(end).patterns.map((p) => ({
    id: p.id,
    role: p.role,
    text: p.text,
    lifecycle: p.lifecycle,
    ...judge(lexicon, p.text, o.runs),
  }));
  const deprecatedTrue = [...new Set(patterns.filter((p) => p.lifecycle === 'deprecated' && p.holds).map((p) => p.rule))];
  return { records, final: { deprecatedTrue, patterns: patterns.length } };
}

/** What a block line states and whether that holds at the run. */
function judge(lexicon, text, run) {
  const hit = lexicon.lookup(text);
  if (!hit) return { rule: null, kind: 'unknown', holds: false };
  return { rule: hit.rule, kind: hit.kind, holds: hit.rule !== null && trueAt(RULE.get(hit.rule), run) };
}

/** The oracle's links: rule → ids of the role's live patterns that state it. */
function citations(driver, lexicon, now, role) {
  const byRule = new Map();
  for (const p of driver.inspect(now, role).patterns) {
    if (p.role !== role || p.lifecycle === 'deprecated') continue;
    const rule = lexicon.lookup(p.text)?.rule;
    if (!rule) continue;
    if (!byRule.has(rule)) byRule.set(rule, []);
    byRule.get(rule).push(p.id);
  }
  return byRule;
}

function wordingOf(rule, set, draw) {
  const all = listWordings(rule, set);
  return all[Math.floor(draw('wording', rule.key) * all.length)];
}

/** The validator's words when it dismisses a finding, as the reasons switch has it. */
function reasonFor(f, sw, set, draw) {
  const bare = set.bareDismissal(f.id);
  if (sw.reasons === 'none') return bare;
  if (sw.reasons === 'sometimes' && draw('say-why', f.rule) >= MODEL.reasonsSometimes) return bare;
  const facts = f.real ? set.wrongDismissals : set.rules[f.rule].why;
  const fixed = sw.reasons === 'fixed';
  const frame = set.reasonFrames[fixed ? 0 : Math.floor(draw('reason-frame', f.rule) * set.reasonFrames.length)];
  return frame(f.id, facts[fixed ? 0 : Math.floor(draw('reason-fact', f.rule) * facts.length)]);
}

/** Items in the order an agent lists them; with markdown, some lists grouped under headings, provenance notes. */
function decorate(items, sw, set, run, draw) {
  const sorted = items.map((it, i) => ({ ...it, order: draw('order', `${i}:${it.text}`) })).sort((a, b) => a.order - b.order);
  if (!sw.markdown) return sorted;
  const grouped = draw('grouped') < MODEL.grouped;
  const out = sorted.map((it) => ({
    text: it.text,
    // an agent files a rule under the same heading every time
    category: grouped ? set.categories[Math.floor(uniform('category', it.rule ?? it.text) * set.categories.length)] : undefined,
    provenance:
      run > 1 && draw('provenance', it.text) < MODEL.provenance
        ? set.provenance[Math.floor(draw('provenance-kind', it.text) * set.provenance.length)](
            issueOf(Math.max(1, run - 1 - Math.floor(draw('provenance-run', it.text) * 5))),
          )
        : undefined,
  }));
  return grouped ? out.sort((a, b) => set.categories.indexOf(a.category) - set.categories.indexOf(b.category)) : out;
}

/** A run's record: per role what the block held and what happened, and the measures over both roles. */
function summarise(record) {
  const all = Object.values(record.roles).flatMap((r) => r.lines);
  const has = (key) => Object.values(record.roles).some((r) => r.lines.some((l) => l.rule === key));
  return {
    ...record,
    lines: all.length,
    holding: all.filter((l) => l.holds).length,
    precision: all.length ? all.filter((l) => l.holds).length / all.length : null,
    junk: all.filter((l) => l.kind === 'junk').length,
    unknown: all.filter((l) => l.kind === 'unknown').length,
    trackedIn: has(TRACKED_ALARM),
    driftOldIn: has(DRIFT_OLD),
    driftNewIn: has(DRIFT_NEW),
  };
}
