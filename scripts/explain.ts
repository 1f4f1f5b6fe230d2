import type { Command } from '../lib/cli/runner.js';
import { list, optionalString } from '../lib/cli/flags.js';
import { resolvePattern } from '../lib/patterns/queries.js';
import { scorePattern, SCORE_CUT } from '../lib/patterns/scoring.js';
import { describePatternEvent, readEvents } from '../lib/events/history.js';
import { nowMs } from '../lib/core/clock.js';
import { CairnError } from '../lib/core/errors.js';
import { sanitizeUntrusted } from '../lib/core/sanitize.js';
import { patternDb } from '../lib/events/log.js';

export const command: Command = {
  name: 'explain',
  usage: `usage: cairn explain <pattern-id|id-prefix|text> [--role R] [--labels a,b] [--files x,y] [--phase P] [--json]

Prints a pattern's counters, its current score broken into factors (as seen from --role,
default its own role, in the given context), and every event that touched it.

example:
  cairn explain p3f9a2 --labels cli
`,
  flags: { string: ['role', 'phase'], list: ['labels', 'files'] },
  operands: true,
  deadlineMs: 0,
  run(ctx) {
    const ref = ctx.args._.map(String).join(' ').trim();
    if (!ref) throw new CairnError('usage', 'name a pattern: cairn explain <id|text>');
    const store = ctx.store();
    const p = resolvePattern(patternDb(store), store.project, ref);
    const role = (optionalString(ctx.args, 'role') ?? p.role).toLowerCase();
    const f = scorePattern(p, { now: nowMs(), role, prior: store.config.prior, labels: list(ctx.args, 'labels'), files: list(ctx.args, 'files'), phase: optionalString(ctx.args, 'phase') ?? undefined });
    const events = readEvents(store.eventsPath, { project: store.project, pattern: p.id }, (m) => ctx.log.warn(m));
    if (ctx.args.json) {
      // timestamps as ISO and flags as booleans, like every other command's JSON
      const pattern = { ...p, last_used: new Date(p.last_used).toISOString(), was_validated: Boolean(p.was_validated), regressed: Boolean(p.regressed) };
      ctx.json({ pattern, factors: f, events });
      return;
    }
    // Everything here came from the log: shown on one line each, without control characters (issue 7).
    const shown = (text: string) => sanitizeUntrusted(text, { singleLine: true });
    const status = p.lifecycle === 'deprecated' ? 'deprecated: never injected' : f.base >= SCORE_CUT ? `injectable (≥ ${SCORE_CUT})` : `below the ${SCORE_CUT} cut`;
    const lines = [
      shown(`pattern ${p.id} — ${p.role}, ${p.category}, ${p.lifecycle}${p.regressed ? ', REGRESSED' : ''}`),
      `text: ${shown(p.text)}`,
      `record: ${fmt(p.success_count)} successes (${fmt(p.untested)} untested since last tested), ${p.ignore_count} ignored (weight ${fmt(p.ignore_weight)}), ${p.reinforcement_count} reinforced, ` +
        `${p.sightings} sightings in ${p.issues.length} issue(s)${p.was_validated ? ', validated' : ''}`,
      shown(`context: labels [${p.labels.join(', ')}] files [${p.files.join(', ')}] phases [${p.phases.join(', ')}]`),
      ...(p.promoted_by ? [shown(`promoted by ${p.promoted_by}: ${p.reason ?? ''}`)] : p.reason ? [`reason: ${shown(p.reason)}`] : []),
      `score for ${shown(role)}: ${f.base.toFixed(4)} = rate ${f.rate.toFixed(3)} × decay ${f.decay.toFixed(3)} (${f.days.toFixed(1)} days since use) ` +
        `× category ${f.category} × context ${f.context.toFixed(2)} × role ${f.role} — ${status}`,
      `history (${events.length} events):`,
      ...events.map((e) => `  ${shown(describePatternEvent(e, events))}`),
    ];
    ctx.print(lines.join('\n') + '\n');
  },
};

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
