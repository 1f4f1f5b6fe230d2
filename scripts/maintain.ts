import type { Command } from '../lib/cli/runner.js';
import { maintain } from '../lib/patterns/lifecycle.js';
import { fillTokenCounts } from '../lib/patterns/format.js';

export const command: Command = {
  name: 'maintain',
  usage: `usage: cairn maintain [--dry-run] [--json]

Deprecates every pattern that is not active and either is stale (score < 0.05 and unused for
30 days or more) or keeps being dismissed (ignored 3 times or more with an observed success rate
under 0.2). Prints one line per deprecated pattern with the rule and its numbers. Then counts
the tokens of every pattern line not counted yet (format-patterns never loads the tokenizer: it
fits an uncounted line by its byte length). Safe to repeat.

  --dry-run   list what would be deprecated; write nothing
  --json      {dry_run, deprecated: [{id, role, text, reason}], counted}

example (cron; \`cairn init\` prints this line with the paths your machine needs):
  17 3 * * * cd /path/to/repo && node_modules/.bin/cairn maintain --quiet
`,
  flags: { boolean: ['dry-run'] },
  deadlineMs: 0,
  run(ctx) {
    const dryRun = Boolean(ctx.args['dry-run']);
    const store = ctx.store();
    const due = maintain(store, dryRun);
    const counted = dryRun ? 0 : fillTokenCounts(store);
    const verb = dryRun ? 'would deprecate' : 'deprecated';
    if (ctx.args.json) {
      const deprecated = due.map((d) => ({ id: d.pattern.id, role: d.pattern.role, text: d.pattern.text, reason: d.reason }));
      ctx.json({ dryRun, deprecated, counted });
    } else {
      for (const d of due) ctx.print(`${verb} ${d.pattern.id} (${d.pattern.role}) — ${d.reason} — ${d.pattern.text}\n`);
    }
    ctx.log.info(`${verb} ${due.length} pattern${due.length === 1 ? '' : 's'}${dryRun ? '' : `; counted the tokens of ${counted} line${counted === 1 ? '' : 's'}`}`);
  },
};
