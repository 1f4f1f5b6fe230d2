import { sanitizeUntrusted } from '../core/sanitize.js';
import { describePatternEvent } from '../events/history.js';
import type { CairnEvent } from '../events/types.js';
import type { Pattern } from './queries.js';
import { SCORE_CUT, type ScoreFactors } from './scoring.js';
import { untestedCredit, type AgedEntry } from '../events/credit.js';

export interface Evidence {
  ledger: AgedEntry[];
  halfLife: number;
}

// `cairn explain` (SPEC §3.2, §3.10.6): a pattern's counters, its score in factors, and its events in words.

/** Everything came from the log, so each line is sanitised. */
export function explainLines(p: Pattern, f: ScoreFactors, role: string, events: CairnEvent[], evidence: Evidence, maxEvents = Infinity) {
  const shown = (text: string) => sanitizeUntrusted(text, { singleLine: true });
  const cut = f.base >= SCORE_CUT ? `injectable (≥ ${SCORE_CUT})` : `below the ${SCORE_CUT} cut`;
  const status = p.lifecycle === 'deprecated' ? 'deprecated: never injected' : cut;
  const left = Math.max(0, events.length - maxEvents);
  const reason = p.reason ? [`reason: ${shown(p.reason)}`] : [];
  const person = p.promoted_by ? [shown(`promoted by ${p.promoted_by}: ${p.reason ?? ''}`)] : reason;
  return [
    shown(`pattern ${p.id} — ${p.role}, ${p.category}, ${p.lifecycle}${p.regressed ? ', REGRESSED' : ''}`),
    `text: ${shown(p.text)}`,
    `record: ${fmt(p.success_count)} successes, ${p.ignore_count} ignored, ${p.reinforcement_count} reinforced, ` +
      `${p.sightings} sightings in ${p.issues.length} issue(s)${p.was_validated ? ', validated' : ''}`,
    `evidence: held up ${fmt(p.held)}, against ${fmt(p.ignore_weight)} (tested, recent verdicts weigh more; ` +
      `half-life ${evidence.halfLife} verdicts), ` +
      `untested ${fmt(p.untested)} (counts ${fmt(untestedCredit(p.untested))})`,
    shown(`context: labels [${p.labels.join(', ')}] files [${p.files.join(', ')}] phases [${p.phases.join(', ')}]`),
    ...person,
    `score for ${shown(role)}: ${f.base.toFixed(4)} = rate ${f.rate.toFixed(3)} × decay ${f.decay.toFixed(3)} ` +
      `(${f.days.toFixed(1)} days since use) × category ${f.category} × context ${f.context.toFixed(2)} ` +
      `× role ${f.role} — ${status}`,
    `history (${events.length} events${left ? `, the newest ${events.length - left} shown` : ''}):`,
    ...(left ? [`  … ${left} earlier event(s) not shown`] : []),
    ...events.slice(left).map((e) => `  ${shown(describePatternEvent(e, events) + weighs(evidence.ledger, e.id))}`),
  ];
}

/** Then and now; a dismissal is negative. */
function weighs(ledger: Evidence['ledger'], event: string): string {
  const tested = ledger.find((x) => x.event === event);
  if (!tested) return '';
  const weight = tested.held || -tested.against;
  return `; weighs ${fmt(weight)}, now ${fmt(weight * tested.factor)}`;
}

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
