// One simulated stream of pipeline runs, in the order a pipeline calls cairn:
//   format-patterns (--issue/--run) → the auditor's deliberation is stored → the curator's is stored
//   → feedback-loop → outcome-score,
// with the simulated clock one day further at each run.
//
// Randomness uses common random numbers: every draw is a function of (seed, run, what, which
// check), never of the order of earlier draws. So two variants of a scenario (correction on, off,
// ablations) and the two drivers see the same adversary, validator and outcomes wherever their
// stores agree, and differ only where cairn's blocks differ — the thing being measured.

import { normaliseText } from '../../dist/lib/core/text.js';
import { ADVERSARY, VALIDATOR } from './drivers.js';
import { TRUE_CHECKS, FALSE_ALARMS } from './pools.js';
import { auditorText, curatorText, sourceLineFor } from './texts.js';
import { TUNING, HELD_OUT } from './paraphrases.js';

const START = Date.parse('2026-01-05T09:00:00Z');
const HOUR_MS = 3_600_000;
/** What the curator says when it wrongly waves a real problem through. */
const WRONG_DISMISSAL = 'the plan already covers this';

/** A uniform number in [0, 1) determined by its keys alone (FNV-1a, then one mulberry32 step). */
export function uniform(...keys) {
  let h = 2166136261;
  for (const ch of keys.join('|')) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  let t = (h + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** The checks in play: T1…TN hold up, F1…FM are false alarms. */
export function checkPool(trueCount, falseCount) {
  const checks = [
    ...TRUE_CHECKS.slice(0, trueCount).map((text, i) => ({ key: `T${i + 1}`, text, alarm: false })),
    ...FALSE_ALARMS.slice(0, falseCount).map((f, i) => ({ key: `F${i + 1}`, text: f.text, why: f.why, alarm: true })),
  ];
  // A paraphrased finding that applied no known pattern is stored as one: it speaks about its check.
  const byText = new Map(checks.map((c) => [normaliseText(c.text), c]));
  for (const set of [TUNING, HELD_OUT]) for (const c of checks) byText.set(normaliseText(set[c.key].summary), c);
  return { checks, byText };
}

/** How a finding about a check is worded: the check's own sentence, or a hand-written paraphrase about the concrete change. */
export const WORDINGS = { verbatim: null, tuning: TUNING, 'held-out': HELD_OUT };
function wordingOf(check, wording) {
  const set = WORDINGS[wording];
  if (set === undefined) throw new Error(`unknown wording ${wording}`);
  if (set === null)
    return {
      summary: check.text,
      location: 'plan §Changes',
      root_cause: check.alarm ? 'project_convention' : 'plan_gap',
      fix_hint: 'Say in the plan how the change meets this check',
    };
  return set[check.key];
}

/**
 * Run one scenario through a driver. `p` holds the parameters (see bench/learning.js), `variant`
 * says which correction steps run: {feedback, outcome, scoped} — scoped = store-deliberation is
 * given --issue/--run (without it cairn cannot tell an echo, nor retract a dismissed sighting).
 */
export function simulate(driver, p, variant) {
  const { checks, byText } = checkPool(p.trueChecks, p.falseAlarms);
  const tracked = p.tracked ? checks.find((c) => c.key === p.tracked) : undefined;
  const kindOf = (text) => byText.get(normaliseText(text));
  const iso = (ms) => new Date(ms).toISOString();
  const records = [];

  for (let k = 1; k <= p.runs; k++) {
    const issue = `SIM-${String(k).padStart(3, '0')}`;
    const run = 'r1';
    const at = (hours) => iso(START + (k - 1) * p.spacingHours * HOUR_MS + hours * HOUR_MS);
    const draw = (what, key = '') => uniform(p.seed, k, what, key);

    const before = driver.inspect(at(0));
    const block = driver.format({ now: at(0), issue, run, budget: p.budget, ids: Boolean(p.citeRate) });
    const shown = block.patterns.map((x) => kindOf(x.text));
    if (shown.some((c) => !c))
      throw new Error(`an injected pattern is not one of the simulated checks: ${block.patterns.map((x) => x.text).join(' | ')}`);

    // The auditor: echoes most of its prompt block, adds what it notices itself, raises the false
    // alarms it lists as findings (each with alarmRaiseRate; the tracked one always), and — when the
    // change really breaks a check — that check.
    const inBlock = new Set(shown.map((c) => c.key));
    // With --ids the block shows each line's short id, and the pipeline asks the auditor to cite the
    // line a finding applies: it does so for a share of the findings about a line it was shown
    // (citeRate), and a share of those cite the line next to it by mistake (wrongCiteRate).
    const cited = (c, wording) => {
      const at = shown.indexOf(c);
      if (!p.citeRate || at < 0 || draw('cite', c.key) >= p.citeRate) return wording;
      const line = draw('wrong-cite', c.key) < p.wrongCiteRate && shown.length > 1 ? (at + 1) % shown.length : at;
      return { ...wording, summary: `${wording.summary} [${block.patterns[line].id.slice(0, 7)}]` };
    };
    const echoed = shown.filter((c) => c === tracked || draw('echo', c.key) < p.echoRate);
    const fresh = checks.filter((c) => !inBlock.has(c.key) && c !== tracked).sort((a, b) => draw('notice', a.key) - draw('notice', b.key));
    const noticed = [...fresh.filter((c) => !c.alarm).slice(0, p.noticeTrue), ...fresh.filter((c) => c.alarm).slice(0, p.noticeFalse)];
    if (tracked && !inBlock.has(tracked.key)) noticed.push(tracked);
    const included = [...echoed, ...noticed].sort((a, b) => draw('order', a.key) - draw('order', b.key));
    const raised = included.filter((c) => c.alarm && (c === tracked || draw('raise', c.key) < p.alarmRaiseRate));
    const candidatesForDefect = included.filter((c) => !c.alarm).sort((a, b) => draw('defect-pick', a.key) - draw('defect-pick', b.key));
    if (candidatesForDefect.length && draw('defect') < p.defectRate) raised.push(candidatesForDefect[0]);
    const findings = raised.map((c, i) => ({
      id: `A${i + 1}`,
      ...cited(c, wordingOf(c, p.wording)),
      kind: c.alarm ? 'alarm' : 'defect',
      check: c,
    }));
    const evidence = p.evidence ?? pickEvidence(draw('evidence'), p);
    const adversarialText = auditorText({
      issue,
      run,
      patterns: included.map((c) => c.text),
      findings,
      evidence,
      sourceLine: sourceLineFor(Math.floor(draw('source') * 1000)),
    });
    const storedScope = variant.scoped ? { issue, run } : { issue: null, run: null };
    driver.store({ now: at(1), role: ADVERSARY, ...storedScope, text: adversarialText });

    // The curator: dismisses each false alarm, but misses one with probability errorRate (then it
    // believes it: must fix); confirms each real defect, but waves one through with trueDismissRate.
    const reviews = findings.map((f) => {
      const c = f.check;
      if (c.alarm) {
        const missed = c === tracked ? p.trackedMissedRuns.includes(k) : draw('miss', c.key) < p.errorRate;
        return missed ? { id: f.id, call: 'confirm' } : { id: f.id, call: 'dismiss', why: p.terseCurator ? null : c.why };
      }
      return draw('wrong-dismissal', c.key) < p.trueDismissRate
        ? { id: f.id, call: 'dismiss', why: p.terseCurator ? null : WRONG_DISMISSAL }
        : { id: f.id, call: 'confirm' };
    });
    const validatorText = curatorText({ issue, run, reviews });
    driver.store({ now: at(2), role: VALIDATOR, ...storedScope, text: validatorText });
    const verdict = reviews.some((r) => r.call === 'confirm') ? 'FAIL' : 'PASS';

    let fb = { gate: 'off', penalised: 0, unmatched: 0, reinforced: 0, penalties: [] };
    if (variant.feedback) {
      const texts = variant.scoped ? {} : { adversarialText, validatorText };
      fb = driver.feedback({ now: at(2.5), issue, run, ...texts });
    }

    // The pipeline's end. 'block': a false alarm in the prompt costs a detour, so a block with fewer
    // of them lands a little more often (the draw is shared by all variants of the run).
    // 'uninformative': the work ships unless the curator waved a real defect through — the outcome
    // says nothing about the block.
    const falseShown = shown.filter((c) => c.alarm).length;
    const passChance = Math.min(1, Math.max(0, p.passBase - p.passDrop * (shown.length ? falseShown / shown.length : 0)));
    const wavedThrough = reviews.some((r, i) => r.call === 'dismiss' && findings[i].kind === 'defect');
    const result = p.outcomeModel === 'uninformative' ? (wavedThrough ? 'fail' : 'pass') : draw('outcome') < passChance ? 'pass' : 'fail';
    if (variant.outcome) driver.outcome({ now: at(3), issue, run, result });

    const trackedPattern =
      tracked && before.patterns.find((x) => x.role === ADVERSARY && normaliseText(x.text) === normaliseText(tracked.text));
    records.push({
      run: k,
      injected: shown.length,
      trueInjected: shown.length - falseShown,
      falseInjected: falseShown,
      precision: shown.length ? (shown.length - falseShown) / shown.length : null,
      candidates: before.candidates.length,
      falseCandidates: before.candidates.filter((c) => kindOf(c.text)?.alarm).length,
      path: block.path,
      tokens: block.tokens,
      ids: block.patterns.map((x) => x.id),
      evidence,
      findings: findings.length,
      verdict,
      gate: fb.gate,
      penalised: fb.penalised,
      unmatched: fb.unmatched,
      reinforced: fb.reinforced,
      // Where each dismissal landed: on the check's own pattern ('rule'), on the finding's summary
      // stored as its own pattern ('summary'), or on another check ('wrong').
      landed: fb.penalties.map((x) => {
        const f = findings.find((g) => g.id === x.finding);
        const norm = normaliseText(x.text);
        const kind = !f
          ? 'wrong'
          : norm === normaliseText(f.check.text)
            ? 'rule'
            : norm === normaliseText(f.summary.replace(/ \[p[0-9a-f]{7}\]$/, ''))
              ? 'summary'
              : 'wrong';
        return kind;
      }),
      outcome: variant.outcome ? result : 'off',
      trackedInBlock: tracked ? inBlock.has(tracked.key) : null,
      trackedScore: tracked ? (trackedPattern?.score ?? 0) : null, // its score before this run, cut or not
    });
  }

  // The block the next run would get: what cairn has learned after p.runs runs (nothing recorded).
  const afterAt = iso(START + p.runs * p.spacingHours * HOUR_MS);
  const afterBlock = driver.format({ now: afterAt, issue: null, run: null, budget: p.budget }).patterns;
  const after = afterBlock.map((x) => kindOf(x.text));
  const falseAfter = after.filter((c) => c.alarm).length;
  const final = driver.inspect(afterAt);
  const state = new Map(final.patterns.map((x) => [x.id, x]));
  return {
    records,
    after: {
      injected: after.length,
      falseInjected: falseAfter,
      precision: after.length ? (after.length - falseAfter) / after.length : null,
      trackedInBlock: tracked ? after.includes(tracked) : null,
      // Patterns reinforced 3 times no longer decay (SPEC §3.4): they hold their place in the block.
      decayImmune: afterBlock.filter((x) => state.get(x.id).reinforcement_count >= 3).length,
    },
    /** False alarms that were ever reinforced (a PASS reinforces whatever was injected). */
    falseReinforced: final.patterns.filter((x) => x.role === ADVERSARY && kindOf(x.text)?.alarm && x.reinforcement_count > 0).length,
    patterns: final.patterns,
  };
}

function pickEvidence(u, p) {
  if (u < p.l1Share) return 'L1';
  if (u < p.l1Share + p.l2Share) return 'L2';
  return 'L3';
}
