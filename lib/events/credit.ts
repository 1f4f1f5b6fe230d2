import { DEFAULT_CONFIG } from '../store/config.js';
import { UNTESTED_UNIT, UNTESTED_UNITS } from '../core/score-weights.js';

// How evidence moves a pattern's record (SPEC §3.10); pure. Untested credit is a bounded prior, so an untested
// pattern never outranks one that held up once (§3.10.1); each piece of tested evidence ages what came before by
// 2^(−strength / half-life), so no verdict protects a pattern from later ones (§3.10.2–3).

export interface Evidence {
  held: number;
  ignore_weight: number;
  untested: number;
}

export function untestedCredit(untested: number): number {
  return UNTESTED_UNIT * Math.min(Math.max(0, untested), UNTESTED_UNITS);
}

/** What counts for the pattern in its success rate: tested credit and the bounded untested prior. */
export function support(e: Evidence): number {
  return Math.max(0, e.held) + untestedCredit(e.untested);
}

export function aging(strength: number, halfLife = DEFAULT_CONFIG.evidence.halfLife): number {
  return halfLife > 0 ? 2 ** (-strength / halfLife) : 1;
}

export interface Tested {
  /** Credit for the pattern (a kept finding: 1; an outcome: its weight). */
  held?: number;
  /** Weight against it (a dismissal: the role's weight; a failing outcome: half of it). */
  against?: number;
  /** How much this evidence ages what came before (a verdict: 1). */
  strength: number;
  halfLife?: number;
}

export function withTested(e: Evidence, t: Tested): Evidence {
  const f = aging(t.strength, t.halfLife);
  return {
    held: e.held * f + (t.held ?? 0),
    ignore_weight: e.ignore_weight * f + (t.against ?? 0),
    untested: e.untested,
  };
}

/** The share of tested evidence that says the pattern holds up (undefined: never tested). */
export function testedRate(e: Pick<Evidence, 'held' | 'ignore_weight'>): number | undefined {
  const total = e.held + e.ignore_weight;
  return total > 0 ? e.held / total : undefined;
}

export interface LedgerEntry {
  event: string;
  held: number;
  against: number;
  aging: number;
}

export type AgedEntry = LedgerEntry & { factor: number };

/** What each piece of tested evidence weighs now: its own weight times the aging of every later one. */
export function agedLedger(entries: LedgerEntry[]): AgedEntry[] {
  const out: AgedEntry[] = [];
  let factor = 1;
  for (let i = entries.length - 1; i >= 0; i--) {
    out.unshift({ ...entries[i], factor });
    factor *= entries[i].aging;
  }
  return out;
}
