import type { Command } from '../lib/cli/runner.js';
import { continuePatterns, rebuildPatterns } from '../lib/events/log.js';

export const command: Command = {
  name: 'rebuild',
  usage: `usage: cairn rebuild [--continue] [--json]

Replays .cairn/events.jsonl, ordered by (ts, id), into a fresh pattern index. The log is the
truth; the database can always be rebuilt from it. Malformed lines are reported and skipped.

  --continue  do not start over: finish what hooks left of a replay (on a fresh clone they replay
              the log a slice at a time and start this in the background for the indexes they
              have no time to build); brings an index that is behind up to date

example:
  git pull && cairn rebuild
`,
  flags: { boolean: ['continue'] },
  deadlineMs: 0,
  run(ctx) {
    const started = Date.now();
    const report = ctx.args.continue ? continuePatterns(ctx.store()) : rebuildPatterns(ctx.store());
    const skipped = report.skipped ? `, skipped ${report.skipped} unreadable lines` : '';
    ctx.log.info(`${ctx.args.continue ? 'applied' : 'replayed'} ${report.applied} events${skipped} in ${Date.now() - started} ms; the index is up to date`);
    if (ctx.args.json) ctx.json(report);
  },
};
