// One job of the harder world's bench: a stream run in a fresh project directory, reduced to what the
// report needs. Used by the bench's worker threads and, in-process, by the test.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { libraryDriver, processDriver } from '../learning/drivers.js';
import { simulate, HARDSHIPS, VARIANTS } from './sim.js';
import { Lexicon } from './lexicon.js';
import { DRIFT_RUN } from './rules.js';
import tuning from './wording-tuning.js';
import heldOut from './wording-held-out.js';

export const SETS = { tuning, 'held-out': heldOut };
/** The last runs a stream's block precision is averaged over. */
export const LAST = 5;

let lexicon;
export function worldLexicon(runs) {
  if (!lexicon || lexicon.runs !== runs) lexicon = Object.assign(new Lexicon(Object.values(SETS), runs), { runs });
  return lexicon;
}

/** Run one stream: job = {row, set, variant, seed, runs, budget, tracked, driver: 'library'|'processes', keep}. */
export function runStream(job) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-world-'));
  const driver = (job.driver === 'processes' ? processDriver : libraryDriver)(dir);
  try {
    const result = simulate(driver, worldLexicon(job.runs), {
      seed: job.seed,
      runs: job.runs,
      budget: job.budget,
      switches: HARDSHIPS.find((h) => h.key === job.row).switches,
      set: SETS[job.set],
      variant: VARIANTS[job.variant],
      tracked: job.tracked ?? null,
    });
    return measure(job, result);
  } finally {
    driver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The measures of one stream (bench/README.md, "Learning: the harder world", defines each). */
export function measure(job, { records, final }) {
  const last = records
    .slice(-LAST)
    .map((r) => r.precision)
    .filter((p) => p !== null);
  const landed = { rule: 0, own: 0, other: 0, unknown: 0 };
  for (const r of records) {
    for (const role of Object.values(r.roles)) {
      for (const p of role.penalties) {
        if (!p.landed) landed.unknown++;
        else if (p.landed.rule !== p.rule) landed.other++;
        else landed[p.landed.kind === 'finding' ? 'own' : 'rule']++;
      }
    }
  }
  return {
    job,
    precision: last.length ? last.reduce((s, p) => s + p, 0) / last.length : null,
    curve: records.map((r) => r.precision),
    junk: records.reduce((s, r) => s + r.junk, 0),
    unknown: records.reduce((s, r) => s + r.unknown, 0),
    lines: records.reduce((s, r) => s + r.lines, 0),
    landed,
    drift: driftOf(records),
    tracked: departure(records.map((r) => r.trackedIn)),
    deprecatedTrue: final.deprecatedTrue,
    fingerprint: createHash('sha256').update(JSON.stringify(records)).digest('hex'),
    records: job.keep ? records : undefined,
  };
}

/** When a line leaves the block for good: {entered, left} (left null: still in at the end; entered null: never in). */
export function departure(inBlock, from = 1) {
  const runs = inBlock.map((v, i) => [i + 1, v]).filter(([run]) => run >= from);
  const entered = runs.find(([, v]) => v)?.[0] ?? null;
  const lastIn = [...runs].reverse().find(([, v]) => v)?.[0] ?? null;
  const end = runs.at(-1)?.[0] ?? null;
  return { entered, left: lastIn === null ? from : lastIn === end ? null : lastIn + 1 };
}

function driftOf(records) {
  if (!records.some((r) => r.driftOldIn || r.driftNewIn || r.run >= DRIFT_RUN)) return null;
  const old = departure(
    records.map((r) => r.driftOldIn),
    DRIFT_RUN,
  );
  const fresh = departure(
    records.map((r) => r.driftNewIn),
    DRIFT_RUN,
  );
  return {
    oldInBefore: records.find((r) => r.run === DRIFT_RUN - 1)?.driftOldIn ?? false,
    oldLeft: old.left,
    newEntered: fresh.entered,
  };
}
