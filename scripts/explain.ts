import type { Command } from '../lib/cli/runner.js';
import { list, optionalString, requiredOperand } from '../lib/cli/flags.js';
import { evidenceLedger, resolvePattern } from '../lib/patterns/queries.js';
import { agedLedger } from '../lib/events/credit.js';
import { scorePattern } from '../lib/patterns/scoring.js';
import { readEvents } from '../lib/events/history.js';
import { explainLines } from '../lib/patterns/explain.js';
import { nowMs } from '../lib/core/clock.js';
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
  person: true,
  run(ctx) {
    const ref = requiredOperand(ctx.args, 'name a pattern: cairn explain <id|text>');
    const store = ctx.store();
    const p = resolvePattern(patternDb(store), store.project, ref);
    const role = (optionalString(ctx.args, 'role') ?? p.role).toLowerCase();
    const f = scorePattern(p, {
      now: nowMs(),
      role,
      prior: store.config.prior,
      labels: list(ctx.args, 'labels'),
      files: list(ctx.args, 'files'),
      phase: optionalString(ctx.args, 'phase') ?? undefined,
    });
    const events = readEvents(store.eventsPath, { project: store.project, pattern: p.id }, (m) => ctx.log.warn(m));
    const ledger = agedLedger(evidenceLedger(patternDb(store), store.project, p.id));
    if (ctx.args.json) {
      // timestamps as ISO and flags as booleans, like every other command's JSON
      const pattern = {
        ...p,
        last_used: new Date(p.last_used).toISOString(),
        was_validated: Boolean(p.was_validated),
        regressed: Boolean(p.regressed),
      };
      ctx.json({ pattern, factors: f, evidence: ledger, events });
      return;
    }
    const lines = explainLines(p, f, role, events, { ledger, halfLife: store.config.evidence.halfLife });
    ctx.print(lines.join('\n') + '\n');
  },
};
