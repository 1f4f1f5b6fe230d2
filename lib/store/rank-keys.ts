import { DAY_MS } from '../core/clock.js';
import {
  CATEGORY_WEIGHT,
  DECAY_DAYS,
  DECAY_IMMUNE_REINFORCEMENTS,
  DEFAULT_PRIOR,
  UNTESTED_UNIT,
  UNTESTED_UNITS,
} from '../core/score-weights.js';

// Rank keys (SPEC §3.4), written once: SQLite uses an expression index only for that very expression (docs/decisions.md).

/** support() of lib/events/credit.ts, in SQL. */
export const SUPPORT_SQL = `(MAX(0, held) + MIN(MAX(0, untested), ${UNTESTED_UNITS}) * ${UNTESTED_UNIT})`;

export const CATEGORY_SQL = `CASE category ${Object.entries(CATEGORY_WEIGHT)
  .map(([c, v]) => `WHEN '${c}' THEN ${v}`)
  .join(' ')} ELSE 1.0 END`;

const RATE_CAT_SQL =
  `((${SUPPORT_SQL} + ${DEFAULT_PRIOR.success}.0) / (${SUPPORT_SQL} + MAX(0, ignore_weight) + ` +
  `${DEFAULT_PRIOR.success + DEFAULT_PRIOR.failure}.0) * ${CATEGORY_SQL})`;

/** A decaying pattern falls by a factor e in this time. */
export const DECAY_SPAN_MS = DECAY_DAYS * DAY_MS;

export const DECAYING_KEY_SQL = `ln(${RATE_CAT_SQL}) + last_used / ${DECAY_SPAN_MS}.0`;
export const DECAYING_SQL = `lifecycle NOT IN ('deprecated', 'active') AND reinforcement_count < ${DECAY_IMMUNE_REINFORCEMENTS}`;

export const IMMUNE_KEY_SQL = `ln(${RATE_CAT_SQL})`;
export const IMMUNE_SQL = `lifecycle != 'deprecated' AND (lifecycle = 'active' OR reinforcement_count >= ${DECAY_IMMUNE_REINFORCEMENTS})`;
