import type { Command } from '../lib/cli/runner.js';
import { list, optionalString, requiredString } from '../lib/cli/flags.js';
import { storeSummary } from '../lib/patterns/format.js';
import { warnUnknownRoles } from '../lib/patterns/roles.js';

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
    const role = requiredString(ctx.args, 'role');
    const text = await ctx.stdin();
    const store = ctx.store();
    warnUnknownRoles(store, role);
    const { basis } = storeSummary(store, role, text, optionalString(ctx.args, 'basis'), {
      labels: list(ctx.args, 'labels'),
      files: list(ctx.args, 'files'),
      phase: optionalString(ctx.args, 'phase'),
    });
    ctx.log.info(`stored a summary for ${role.toLowerCase()} (basis ${basis.slice(0, 12)})`);
  },
};
