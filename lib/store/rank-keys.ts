import { DAY_MS } from '../core/clock.js';
import {
  CATEGORY_WEIGHT,
  DECAY_DAYS,
  DECAY_IMMUNE_REINFORCEMENTS,
  DEFAULT_PRIOR,
  UNTESTED_UNIT,
  UNTESTED_UNITS,
} from '../core/score-weights.js';

// The rank keys of the patterns table (SPEC §3.4), written once: db.ts indexes these very expressions and the
// ranking reads them by the same text, as SQLite uses an expression index only for that expression. The
// moment-independent part of ln(score) orders a role's patterns as the score does at any time, up to the context
// and role factors; both keys use the default prior (a configured one scores every candidate).

/** support() of lib/events/credit.ts over the patterns table. */
export const SUPPORT_SQL = `(MAX(0, held) + MIN(MAX(0, untested), ${UNTESTED_UNITS}) * ${UNTESTED_UNIT})`;

export const CATEGORY_SQL = `CASE category ${Object.entries(CATEGORY_WEIGHT)
  .map(([c, v]) => `WHEN '${c}' THEN ${v}`)
  .join(' ')} ELSE 1.0 END`;

const RATE_CAT_SQL =
  `((${SUPPORT_SQL} + ${DEFAULT_PRIOR.success}.0) / (${SUPPORT_SQL} + MAX(0, ignore_weight) + ` +
  `${DEFAULT_PRIOR.success + DEFAULT_PRIOR.failure}.0) * ${CATEGORY_SQL})`;

/** How long a decaying pattern takes to fall by a factor e. */
export const DECAY_SPAN_MS = DECAY_DAYS * DAY_MS;

/** The rank key of a decaying pattern, and which patterns decay. */
export const DECAYING_KEY_SQL = `ln(${RATE_CAT_SQL}) + last_used / ${DECAY_SPAN_MS}.0`;
export const DECAYING_SQL = `lifecycle NOT IN ('deprecated', 'active') AND reinforcement_count < ${DECAY_IMMUNE_REINFORCEMENTS}`;

/** The rank key of a decay-immune pattern, and which patterns are. */
export const IMMUNE_KEY_SQL = `ln(${RATE_CAT_SQL})`;
export const IMMUNE_SQL = `lifecycle != 'deprecated' AND (lifecycle = 'active' OR reinforcement_count >= ${DECAY_IMMUNE_REINFORCEMENTS})`;
