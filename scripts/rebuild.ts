import type { Command } from '../lib/cli/runner.js';
import { continuePatterns, packLater, patternDb, rebuildPatterns } from '../lib/events/log.js';
import { packPostingLists } from '../lib/patterns/index/index.js';
import { applier, deferredCount, runDeferred } from '../lib/store/deferred.js';

export const command: Command = {
  name: 'rebuild',
  usage: `usage: cairn rebuild [--continue] [--json]

Replays .cairn/events.jsonl, ordered by (ts, id), into a fresh pattern index. The log is the
truth; the database can always be rebuilt from it. Malformed lines are reported and skipped.

  --continue  do not start over: finish what hooks left of a replay (on a fresh clone they replay
              the log a slice at a time and start this in the background for the indexes they
              have no time to build); brings an index that is behind up to date, and packs the
              term index's long posting lists as cairn maintain does, so that the first writers
              read them as one blob each

Either way it then applies, in the order they came, the writes that store-deliberation,
feedback-loop, outcome-score and memory-capture kept for later (one process at a time does). Started
in the background it has a deadline of 10 minutes and gives each kept write 60 s: one that needs more
is set aside (cache/deferred/*.failed, cairn doctor fails on it) and applied, without a bound, by
the next cairn rebuild --continue run at a terminal.

A full rebuild empties the packed lists and packs them again: at once for a small index, in the
background (cairn rebuild --continue) for a large one (about half a second at 100k patterns).

example:
  git pull && cairn rebuild
`,
  flags: { boolean: ['continue'] },
  deadlineMs: 0,
  run(ctx) {
    const started = Date.now();
    const store = ctx.store();
    const progress = ctx.progress(ctx.args.continue ? 'applying events' : 'replaying events');
    const report = ctx.args.continue ? continuePatterns(store, progress) : rebuildPatterns(store, progress);
    const skipped = report.skipped ? `, skipped ${report.skipped} unreadable lines` : '';
    ctx.log.info(`${ctx.args.continue ? 'applied' : 'replayed'} ${report.applied} events${skipped} in ${Date.now() - started} ms; the index is up to date`);
    const deferred = runDeferred(store);
    if (deferred) ctx.log.info(`applied ${deferred} write(s) kept while the index was catching up`);
    const holder = deferredCount(store.dir) ? applier(store.dir) : undefined;
    if (holder) ctx.log.info(`the kept writes still waiting are applied by another process (cache/deferred.lock ${holder})`);
    // A replay empties the packed posting lists: the first writers read them packed again once they
    // are packed here (--continue has no deadline: a fresh clone's hooks run it in the background;
    // a small index), or in the background for a large index (packLater).
    const pack = ctx.args.continue || !packLater(store);
    if (pack) ctx.deadline.check('packing the posting lists'); // a background job's bound (lib/store/background.ts)
    const packed = pack ? packPostingLists(patternDb(store), store.project) : 0;
    if (packed) ctx.log.info(`packed ${packed} posting list(s)`);
    if (ctx.args.json) ctx.json({ ...report, deferred, packed });
  },
};
