// The harder world of bench:learning (bench/world/) checks its own invariants: a world that is not
// deterministic, whose oracle cites ids that do not exist, whose held-out wording repeats the tuning
// wording, or whose "near-miss twins" differ by more than an identifier would measure nothing.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's drivers are plain JavaScript
import { libraryDriver } from '../bench/learning/drivers.js';
// @ts-expect-error: the harder world is plain JavaScript, as the rest of bench/
import { simulate, HARDSHIPS, VARIANTS, MODEL } from '../bench/world/sim.js';
// @ts-expect-error: plain JavaScript
import { runStream, worldLexicon, SETS as ANY_SETS } from '../bench/world/stream.js';
// @ts-expect-error: plain JavaScript
import { normalise, listWordings } from '../bench/world/lexicon.js';
// @ts-expect-error: plain JavaScript
import { RULES as ANY_RULES, RULE, TWINS } from '../bench/world/rules.js';

/** The shapes of bench/world/rules.js and its wording sets, as far as the test reads them. */
interface Rule {
  key: string;
  group: string;
  truth: boolean;
  text: string;
}
interface WordingSet {
  name: string;
  rules: Record<string, { findings: string[]; reword?: string; why?: string[] }>;
  reasonFrames: ((id: string, fact: string) => string)[];
  bareDismissal: (id: string) => string;
  wrongDismissals: string[];
  categories: string[];
}
const SETS = ANY_SETS as Record<'tuning' | 'held-out', WordingSet>;
const RULES = ANY_RULES as Rule[];

const RUNS = 4;
const combined = HARDSHIPS.find((h: { key: string }) => h.key === 'combined');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every text a stream stored, with the store, for the oracle's citations. */
function oracleStream(runs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-world-test-'));
  dirs.push(dir);
  const driver = libraryDriver(dir);
  const stored: { role: string; text: string }[] = [];
  const spy = { ...driver, store: (a: { role: string; text: string }) => (stored.push(a), driver.store(a)) };
  const result = simulate(spy, worldLexicon(runs), {
    seed: 1,
    runs,
    budget: MODEL.budget,
    switches: combined.switches,
    set: SETS['held-out'],
    variant: VARIANTS.oracle,
    tracked: null,
  });
  const patterns = driver.inspect('2026-03-02T20:00:00Z').patterns as { id: string; role: string; text: string }[];
  driver.close();
  return { stored, result, patterns };
}

/** The findings of a stored adversarial text's verdict-json (an HTML comment or a fenced block). */
function findingsOf(text: string): { id: string; summary: string; patterns?: string[] }[] {
  const json = text.match(/<!-- jkz:verdict-json\n([\s\S]*?)\n-->/)?.[1] ?? text.match(/```verdict-json\n([\s\S]*?)\n```/)?.[1];
  return json ? JSON.parse(json).issues : [];
}

describe('the harder world of bench:learning', () => {
  it('gives the same records for the same seed, and other records for another seed', () => {
    const job = {
      row: 'combined',
      set: 'held-out',
      variant: 'on',
      seed: 1,
      runs: RUNS,
      budget: MODEL.budget,
      keep: true,
    };
    const a = runStream(job);
    const b = runStream(job);
    expect(b.records).toEqual(a.records);
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(runStream({ ...job, seed: 2 }).fingerprint).not.toBe(a.fingerprint);
  });

  it("words every block line in texts it wrote itself, so each line's truth is known", () => {
    const r = runStream({
      row: 'combined',
      set: 'tuning',
      variant: 'off',
      seed: 3,
      runs: RUNS,
      budget: MODEL.budget,
      keep: true,
    });
    expect(r.lines).toBeGreaterThan(10);
    expect(r.unknown).toBe(0);
  });

  it("has the oracle cite the ids of the adversary's own patterns that state the finding's rule", () => {
    const { stored, patterns } = oracleStream(RUNS);
    const lexicon = worldLexicon(RUNS);
    const byId = new Map(patterns.map((p) => [p.id, p]));
    let cited = 0;
    for (const { role, text } of stored.filter((s) => s.role === 'auditor' || s.role === 'sentinel')) {
      for (const f of findingsOf(text)) {
        for (const id of f.patterns ?? []) {
          cited++;
          const p = byId.get(id);
          expect(p, `${f.id} cites ${id}`).toBeDefined();
          expect(p!.role).toBe(role);
          expect(lexicon.lookup(p!.text)?.rule).toBe(lexicon.lookup(f.summary)?.rule);
        }
      }
    }
    expect(cited).toBeGreaterThan(5);
  });

  it('words the held-out set apart from the tuning set: no finding, rewording, reason or frame in common', () => {
    const texts = (set: WordingSet) => {
      const rules = Object.values(set.rules).flatMap((w) => [...w.findings, ...(w.reword ? [w.reword] : []), ...(w.why ?? [])]);
      const frames = [...set.reasonFrames.map((f) => f('A1', 'x')), set.bareDismissal('A1'), ...set.wrongDismissals, ...set.categories];
      return new Set([...rules, ...frames].map(normalise));
    };
    const tuning = texts(SETS.tuning);
    const shared = [...texts(SETS['held-out'])].filter((t) => tuning.has(t));
    expect(shared).toEqual([]);
    for (const set of Object.values(SETS)) {
      for (const rule of RULES) {
        const w = set.rules[rule.key];
        expect(w?.findings.length, `${set.name} ${rule.key}`).toBeGreaterThan(0);
        // a rule the validator dismisses (false, or obsolete after the drift) has reasons to give
        if (!rule.truth || rule.group === 'drift-old') expect(w.why?.length, `${set.name} ${rule.key}`).toBeGreaterThan(0);
      }
    }
  });

  it('makes the near-miss twins one identifier apart, of opposite truth, in every wording', () => {
    for (const [yes, no] of TWINS) {
      const a: Rule = RULE.get(yes);
      const b: Rule = RULE.get(no);
      expect([a.truth, b.truth]).toEqual([true, false]);
      const ta = a.text.split(' ');
      const tb = b.text.split(' ');
      expect(tb.length).toBe(ta.length);
      const differ = ta.map((w: string, i: number) => [w, tb[i]]).filter(([x, y]: string[]) => x !== y);
      expect(differ, `${yes} / ${no}`).toHaveLength(1);
      const [ia, ib] = differ[0];
      // an identifier: a code name with a digit, a hyphen or a slash
      for (const id of [ia, ib]) expect(id).toMatch(/\d|-|\//);
      for (const set of Object.values(SETS)) {
        // the rewordings are twins too, and each finding names its own identifier, never the twin's
        const wa = listWordings(a, set);
        const wb = listWordings(b, set);
        wa.forEach((w: string, i: number) => expect(w.replace(ia, ib)).toBe(wb[i]));
        for (const f of set.rules[yes].findings) expect(f.includes(ia) && !f.includes(ib)).toBe(true);
        for (const f of set.rules[no].findings) expect(f.includes(ib) && !f.includes(ia)).toBe(true);
      }
    }
  });
});
