// The numbers a pattern's score is built from (SPEC §3.4, §3.9.3, §3.10.1); lib/patterns/scoring.ts
// is the score. They sit this low because the store's rank indexes are built on them
// (lib/store/rank-keys.ts), and the store imports nothing from the domains.

/** A category's weight in the score. */
export const CATEGORY_WEIGHT = { rule: 1.3, causal: 1.1, observation: 1.0 } as const;

/** The success rate's prior: α pseudo-successes and β pseudo-failures (config "prior" replaces it). */
export const DEFAULT_PRIOR = { success: 1, failure: 1 } as const;

/** Time decay: exp(−days / DECAY_DAYS), except for a pattern reinforced this many times (or active). */
export const DECAY_DAYS = 14;
export const DECAY_IMMUNE_REINFORCEMENTS = 3;

/**
 * What one untested sighting adds to a pattern's support, and how many of them count at most: 0.05 in
 * all, so a rule (category 1.3) never tested, (0.05 + 1) / (0.05 + 2) × 1.3 = 0.666, stays under an
 * observation (1.0) that held up once, 2/3 — the category weights never turn the order round (§3.10.1).
 */
export const UNTESTED_UNIT = 0.01;
export const UNTESTED_UNITS = 5;
