import { DEFAULT_CONFIG } from '../store/config.js';
import { UNTESTED_UNIT, UNTESTED_UNITS } from '../core/score-weights.js';

// How evidence moves a pattern's record (SPEC §3.10; docs/internals.md, "Credit from tested evidence"); pure.

export interface Evidence {
  held: number;
  ignore_weight: number;
  untested: number;
}

export function untestedCredit(untested: number): number {
  return UNTESTED_UNIT * Math.min(Math.max(0, untested), UNTESTED_UNITS);
}

/** What speaks for the pattern in its rate. */
export function support(e: Evidence): number {
  return Math.max(0, e.held) + untestedCredit(e.untested);
}

export function aging(strength: number, halfLife = DEFAULT_CONFIG.evidence.halfLife): number {
  return halfLife > 0 ? 2 ** (-strength / halfLife) : 1;
}

export interface Tested {
  /** a kept finding: 1; an outcome: its weight */
  held?: number;
  /** a dismissal: the role's weight; a failing outcome: half of it */
  against?: number;
  /** how much it ages what came before (a verdict: 1) */
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

/** undefined: never tested */
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

/** Each piece's weight now: its own times the aging of every later one. */
export function agedLedger(entries: LedgerEntry[]): AgedEntry[] {
  const out: AgedEntry[] = [];
  let factor = 1;
  for (let i = entries.length - 1; i >= 0; i--) {
    out.unshift({ ...entries[i], factor });
    factor *= entries[i].aging;
  }
  return out;
}
