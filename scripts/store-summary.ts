import type { Command } from '../lib/cli/runner.js';
import { list, optionalString, requiredString } from '../lib/cli/flags.js';
import { currentBasis } from '../lib/patterns/format.js';
import { CairnError } from '../lib/core/errors.js';
import { warnUnknownRoles } from '../lib/patterns/roles.js';
import { appendEvents } from '../lib/events/log.js';

const MAX_SUMMARY_BYTES = 3000;

export const command: Command = {
  name: 'store-summary',
  usage: `usage: cairn store-summary --role R [--basis HASH] [--labels a,b] [--files x,y] [--phase P] < summary.txt

Stores a condensed text (from stdin, e.g. written by an LLM step) that format-patterns uses
instead of truncating, as long as the role's candidate patterns are still the ones it was
written for. The basis is computed from the current candidates (with the same context flags
format-patterns gets), or given with --basis.

example:
  format-patterns --role judge --budget 100000 | summarise | cairn store-summary --role judge
`,
  flags: { string: ['role', 'basis', 'phase'], list: ['labels', 'files'] },
  deadlineMs: 2000,
  async run(ctx) {
    const role = requiredString(ctx.args, 'role').toLowerCase();
    const text = (await ctx.stdin()).trim();
    if (!text) throw new CairnError('input', 'no summary text on stdin');
    // The summary travels inside one event line, and event lines stay small (SPEC §3.2).
    if (Buffer.byteLength(text) > MAX_SUMMARY_BYTES) throw new CairnError('input', `the summary is ${Buffer.byteLength(text)} bytes; at most ${MAX_SUMMARY_BYTES} are stored`);
    const store = ctx.store();
    warnUnknownRoles(store, role);
    const basis =
      optionalString(ctx.args, 'basis') ??
      currentBasis(store, { role, issue: null, run: null, labels: list(ctx.args, 'labels'), files: list(ctx.args, 'files'), phase: optionalString(ctx.args, 'phase') });
    appendEvents(store, [{ type: 'summary.stored', role, basis, text }]);
    ctx.log.info(`stored a summary for ${role} (basis ${basis.slice(0, 12)})`);
  },
};
