// A score's numbers (SPEC §3.4, §3.9.3, §3.10.1), here because the store's rank indexes use them.

export const CATEGORY_WEIGHT = { rule: 1.3, causal: 1.1, observation: 1.0 } as const;

/** config "prior" replaces it. */
export const DEFAULT_PRIOR = { success: 1, failure: 1 } as const;

/** exp(−days / DECAY_DAYS), unless reinforced this often (or active). */
export const DECAY_DAYS = 14;
export const DECAY_IMMUNE_REINFORCEMENTS = 3;

/** 0.05 in all keeps a never-tested rule (0.666) under an observation held up once (2/3), §3.10.1. */
export const UNTESTED_UNIT = 0.01;
export const UNTESTED_UNITS = 5;
