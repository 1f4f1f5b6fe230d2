import { identifiers, indexTerms } from '../core/text.js';

// Which texts are one pattern (SPEC §3.10.4; docs/internals.md, "Identity"): rules one identifier apart are two.

/** Of content terms. */
export const NEAR_DUPLICATE = 0.8;

export interface RuleKey {
  terms: Set<string>;
  identifiers: Set<string>;
}

export function ruleKey(text: string): RuleKey {
  return { terms: new Set(indexTerms(text).terms), identifiers: identifiers(text) };
}

/** A text of function words is only itself. */
export function sameRule(a: RuleKey, b: RuleKey): boolean {
  return similarity(a, b) >= NEAR_DUPLICATE;
}

/** 0 when the identifiers differ. */
export function similarity(a: RuleKey, b: RuleKey): number {
  if (a.terms.size === 0 || b.terms.size === 0 || !sameSet(a.identifiers, b.identifiers)) return 0;
  let shared = 0;
  for (const t of a.terms) if (b.terms.has(t)) shared++;
  return shared / (a.terms.size + b.terms.size - shared);
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** `helper3` / `helper18`: one or two characters apart, neither part of the other. */
export function nearMiss(a: string, b: string): boolean {
  if (a === b || a.includes(b) || b.includes(a) || a.length > MAX_COMPARED || b.length > MAX_COMPARED) return false;
  return Math.abs(a.length - b.length) <= 2 && editDistanceAtMost(a, b, 2);
}

/** And not that identifier itself. */
export function conflicts(finding: Set<string>, rule: Set<string>): boolean {
  for (const r of rule) {
    if (finding.has(r)) continue;
    for (const f of finding) if (nearMiss(f, r)) return true;
  }
  return false;
}

/** Bare numbers aside; a path by a `path:LINE` in it, a name by its acronym (`IE11`). */
export function sharedIdentifiers(findingText: string, finding: Set<string>, ruleText: string, rule: Set<string>): number {
  let shared = 0;
  for (const r of rule) {
    if (NUMBER.test(r)) continue; // "3 retries" and "3 files" name nothing in common
    if (finding.has(r) || (PATH_LIKE.test(r) && [...finding].some((f) => f.startsWith(r)))) shared++;
  }
  return shared + acronymsMet(findingText, ruleText) + acronymsMet(ruleText, findingText);
}

const PATH_LIKE = /[/._:-]/;
const NUMBER = /^[\d.,]+$/;
const ACRONYM = /\b([A-Z]{2,6})(\d*)\b/g;
const WORD = /[\p{L}\p{N}]+/gu;

/** Two letters alone spell too much. */
function acronymsMet(short: string, long: string): number {
  const words = long.match(WORD) ?? [];
  if (words.length < 2) return 0;
  let met = 0;
  for (const [, letters, number] of short.matchAll(ACRONYM)) {
    const n = letters.length;
    if (n < 3 && number === '') continue;
    for (let i = 0; i + n <= words.length; i++) {
      const spelled = words.slice(i, i + n).every((w, k) => w[0] === letters[k] && w.length > 1);
      if (spelled && (number === '' || words[i + n] === number)) {
        met++;
        break;
      }
    }
  }
  return met;
}

/** Longer ones compared only whole: an edit distance costs their lengths' product. */
const MAX_COMPARED = 64;

function editDistanceAtMost(a: string, b: string, max: number): boolean {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]);
    }
    if (best > max) return false;
    prev = row;
  }
  return prev[b.length] <= max;
}
