// How often cairn's finding → pattern matcher (lib/patterns/link.ts bestCandidate, SPEC §3.9.1)
// links a paraphrased finding to the check it is about. Each finding of a wording set is linked
// against a deliberation-sized first tier (its own check among 24 others drawn at random) and the
// remaining checks as the second tier, as store-deliberation does. A wrong link penalises or credits
// an innocent pattern; no link leaves the rule untouched (the finding becomes its own pattern).

import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRUE_CHECKS, FALSE_ALARMS } from './pools.js';
import { uniform } from './sim.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { bestCandidate, weightsAmong } = await import(join(REPO, 'dist', 'lib', 'patterns', 'link.js'));

const FIRST_TIER = 25;
const TRIALS = 20;

const CHECKS = [
  ...TRUE_CHECKS.map((text, i) => ({ key: `T${i + 1}`, text })),
  ...FALSE_ALARMS.map((f, i) => ({ key: `F${i + 1}`, text: f.text, why: f.why })),
];

/**
 * {right, wrong, none} shares over every check's finding of `set`, and the wrong links seen, check →
 * linked check. `alarms`: over the false alarms' findings only — the ones a curator dismisses —
 * and `reason`: each read as feedback-loop reads a dismissal, the summary and then the curator's
 * line about it (sim.js, texts.js curatorText).
 */
export function linkAccuracy(set, { seed = 1, alarms = false, reason = false } = {}) {
  const checks = CHECKS;
  const counts = { right: 0, wrong: 0, none: 0 };
  const wrong = new Map();
  for (const check of alarms ? checks.filter((c) => c.why) : checks) {
    const own = set[check.key];
    const finding = {
      id: 'A1',
      ...own,
      ...(reason ? { summary: `${own.summary}\nfalse positive. This does not apply here: ${check.why}.` } : {}),
    };
    for (let t = 0; t < TRIALS; t++) {
      const others = checks
        .filter((c) => c !== check)
        .sort((a, b) => uniform(seed, t, check.key, a.key) - uniform(seed, t, check.key, b.key));
      const candidates = [check, ...others].map((c) => ({ id: c.key, text: c.text }));
      // the role's patterns are the checks: each word weighs by how many of them hold it
      const weight = weightsAmong(checks.map((c) => c.text));
      const best =
        bestCandidate(finding, candidates.slice(0, FIRST_TIER), weight) ?? bestCandidate(finding, candidates.slice(FIRST_TIER), weight);
      if (!best) counts.none++;
      else if (best.id === check.key) counts.right++;
      else {
        counts.wrong++;
        const k = `${check.key}→${best.id}`;
        wrong.set(k, (wrong.get(k) ?? 0) + 1);
      }
    }
  }
  const n = counts.right + counts.wrong + counts.none;
  return {
    right: counts.right / n,
    wrong: counts.wrong / n,
    none: counts.none / n,
    trials: n,
    wrongLinks: [...wrong].sort((a, b) => b[1] - a[1]),
  };
}
