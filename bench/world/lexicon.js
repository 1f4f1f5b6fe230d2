// Which rule a pattern's text states: the world knows every text it made its agents write (rule
// wordings, rewordings, finding summaries, and the lines that state no rule at all — category
// headings, provenance notes), so a block line is judged by the rule it was written for, never by
// cairn's own idea of it. cairn stores items with their markdown stripped and wrapped lines joined,
// so texts are compared normalised (lower case, letters and digits only); a stored text that holds a
// known text (an agent's note around it) states that text's rule.

import { RULES } from './rules.js';

export function normalise(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The function-word rewordings every agent makes (each/every, so that/so, because/since). */
export function functionWordVariants(text) {
  const out = [text];
  const swapped = text.replace(/\b(Each|each|Every|every)\b/, (w) => ({ Each: 'Every', each: 'every', Every: 'Each', every: 'each' })[w]);
  if (swapped !== text) out.push(swapped);
  for (const t of [...out]) {
    if (t.includes(', so that ')) out.push(t.replace(', so that ', ', so '));
    else if (t.includes(', so ')) out.push(t.replace(', so ', ', so that '));
    if (t.includes(', because ')) out.push(t.replace(', because ', ', since '));
    else if (t.includes(', since ')) out.push(t.replace(', since ', ', because '));
  }
  return [...new Set(out)];
}

/** Every wording of a rule an adversary lists from memory: its text and the set's rewording, with their variants. */
export function listWordings(rule, set) {
  const reword = set.rules[rule.key]?.reword;
  return [...new Set([rule.text, ...(reword ? [reword] : [])].flatMap(functionWordVariants))];
}

/** The junk lines of a set over `runs` runs: category headings and provenance notes. */
export function junkTexts(set, runs) {
  const issues = Array.from({ length: runs }, (_, i) => issueOf(i + 1));
  return [...set.categories, ...issues.flatMap((issue) => set.provenance.map((p) => p(issue)))];
}

export function issueOf(run) {
  return `QS-${100 + run}`;
}

export class Lexicon {
  constructor(sets, runs) {
    this.exact = new Map();
    const add = (text, rule, kind) => {
      const k = normalise(text);
      if (!this.exact.has(k)) this.exact.set(k, { rule, kind });
    };
    for (const set of sets) {
      for (const rule of RULES) {
        for (const t of listWordings(rule, set)) add(t, rule.key, 'wording');
        for (const f of set.rules[rule.key]?.findings ?? []) add(f, rule.key, 'finding');
      }
      for (const j of junkTexts(set, runs)) add(j, null, 'junk');
    }
    this.known = [...this.exact.entries()].filter(([k]) => k.length >= 20).sort((a, b) => b[0].length - a[0].length);
    this.cache = new Map();
  }

  /**
   * {rule, kind} for a known text: rule is the key of the rule it states (null for a line that states
   * none), kind 'wording' (a rule as listed), 'finding' (a finding's summary) or 'junk'; undefined
   * for a text the world never wrote.
   */
  lookup(text) {
    const k = normalise(text);
    if (this.cache.has(k)) return this.cache.get(k);
    let hit = this.exact.get(k);
    if (!hit) {
      const padded = ` ${k} `;
      hit = this.known.find(([known]) => padded.includes(` ${known} `))?.[1];
    }
    this.cache.set(k, hit);
    return hit;
  }
}
