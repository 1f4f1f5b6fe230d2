import type { Command } from '../lib/cli/runner.js';
import { sanitizeUntrusted } from '../lib/core/sanitize.js';
import { maintain } from '../lib/patterns/lifecycle.js';
import { fillTokenCounts } from '../lib/patterns/format.js';
import { packPostingLists } from '../lib/patterns/index/index.js';
import { patternDb } from '../lib/events/log.js';
import { recordMaintained } from '../lib/store/doctor.js';
import { describeError } from '../lib/core/errors.js';

export const command: Command = {
  name: 'maintain',
  usage: `usage: cairn maintain [--dry-run] [--json]

Deprecates every pattern that is not active and either is stale (score < 0.05 and unused for
30 days or more) or keeps being dismissed (ignored 3 times or more, and under 20 % of its recent
tested evidence held up). Prints one line per deprecated pattern with the rule and its numbers. Then counts
the tokens of every pattern line not counted yet (format-patterns never loads the tokenizer: it
fits an uncounted line by its byte length), and keeps the term index's long posting lists packed
(store-deliberation then reads each as one blob). Safe to repeat.

  --dry-run   list what would be deprecated; write nothing
  --json      {dry_run, deprecated: [{id, role, text, reason}], counted, packed}

example (cron; \`cairn init\` prints this line with the paths your machine needs):
  17 3 * * * cd /path/to/repo && node_modules/.bin/cairn maintain --quiet
`,
  flags: { boolean: ['dry-run'] },
  deadlineMs: 0,
  run(ctx) {
    const dryRun = Boolean(ctx.args['dry-run']);
    const store = ctx.store();
    const due = maintain(store, dryRun, ctx.progress('scoring patterns'));
    let counted = 0;
    let packed = 0;
    if (!dryRun) {
      try {
        counted = fillTokenCounts(store, ctx.progress('counting tokens'));
      } catch (err) {
        // a cache (format-patterns fits an uncounted line by its bytes): where the tokenizer cannot load
        // (it is WebAssembly: not under node --jitless or a ulimit -v), maintenance goes on without it
        ctx.log.warn(`no line's tokens counted: ${describeError(err)}; format-patterns fits uncounted lines by their byte length`);
      }
      packed = packPostingLists(patternDb(store), store.project);
      recordMaintained(store);
    }
    const verb = dryRun ? 'would deprecate' : 'deprecated';
    if (ctx.args.json) {
      const deprecated = due.map((d) => ({
        id: d.pattern.id,
        role: d.pattern.role,
        text: d.pattern.text,
        reason: d.reason,
      }));
      ctx.json({ dryRun, deprecated, counted, packed });
    } else {
      for (const d of due)
        ctx.print(
          sanitizeUntrusted(`${verb} ${d.pattern.id} (${d.pattern.role}) — ${d.reason} — ${d.pattern.text}`, {
            singleLine: true,
          }) + '\n',
        );
    }
    const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
    const tallied = `; counted the tokens of ${plural(counted, 'line')}; packed ${plural(packed, 'posting list')}`;
    ctx.log.info(`${verb} ${plural(due.length, 'pattern')}${dryRun ? '' : tallied}`);
  },
};
