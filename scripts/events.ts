import type { Command } from '../lib/cli/runner.js';
import { optionalString } from '../lib/cli/flags.js';
import { describeEvent, parseSince, readEvents } from '../lib/events/history.js';
import { nowMs } from '../lib/core/clock.js';

export const command: Command = {
  name: 'events',
  usage: `usage: cairn events [--type T] [--since DATE|7d] [--pattern ID] [--json]

Prints this project's events from .cairn/events.jsonl in (ts, id) order, one per line
(--json: the raw event lines, one JSON object a line: a stream, not one object). --type matches a type or a family (pattern).

example:
  cairn events --type pattern.ignored --since 7d
`,
  flags: { string: ['type', 'since', 'pattern'] },
  deadlineMs: 0,
  person: true,
  run(ctx) {
    const store = ctx.store();
    const since = optionalString(ctx.args, 'since');
    const events = readEvents(
      store.eventsPath,
      {
        project: store.project,
        type: optionalString(ctx.args, 'type') ?? undefined,
        since: since === null ? undefined : parseSince(since, nowMs()),
        pattern: optionalString(ctx.args, 'pattern') ?? undefined,
      },
      (m) => ctx.log.warn(m),
    );
    for (const e of events) {
      if (ctx.args.json) ctx.json(e);
      else ctx.print(describeEvent(e) + '\n');
    }
  },
};
