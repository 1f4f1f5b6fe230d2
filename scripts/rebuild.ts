import type { Command } from '../lib/cli/runner.js';
import { rebuildPatterns } from '../lib/events/log.js';

export const command: Command = {
  name: 'rebuild',
  usage: `usage: cairn rebuild [--json]

Replays .cairn/events.jsonl, ordered by (ts, id), into a fresh pattern index. The log is the
truth; the database can always be rebuilt from it. Malformed lines are reported and skipped.

example:
  git pull && cairn rebuild
`,
  flags: {},
  deadlineMs: 0,
  run(ctx) {
    const started = Date.now();
    const report = rebuildPatterns(ctx.store());
    ctx.log.info(`replayed ${report.applied} events${report.skipped ? `, skipped ${report.skipped} unreadable lines` : ''} in ${Date.now() - started} ms`);
    if (ctx.args.json) ctx.json(report);
  },
};
