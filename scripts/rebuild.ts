import type { Command } from '../lib/cli/runner.js';
import { CairnError } from '../lib/core/errors.js';
import { continuePatterns, packLater, patternDb, rebuildPatterns } from '../lib/events/log.js';
import { packPostingLists } from '../lib/patterns/index/index.js';
import { BACKGROUND_JOBS, REBUILD_STEPS, type RebuildStep } from '../lib/store/background.js';
import { applier, deferredCount, runDeferred } from '../lib/store/deferred.js';

const JOBS = Object.entries(BACKGROUND_JOBS)
  .filter(([, job]) => job.steps.length)
  .map(([name]) => name);

export const command: Command = {
  name: 'rebuild',
  usage: `usage: cairn rebuild [--continue [--job <name>]] [--json]

Replays .cairn/events.jsonl, ordered by (ts, id), into a fresh pattern index. The log is the
truth; the database can always be rebuilt from it. Malformed lines are reported and skipped.

  --continue  do not start over: finish what hooks left of a replay (on a fresh clone they replay
              the log a slice at a time and start this in the background for the indexes they
              have no time to build); brings an index that is behind up to date, and packs the
              term index's long posting lists as cairn maintain does, so that the first writers
              read them as one blob each
  --job NAME  with --continue, only what the background job NAME does: finish-index (catch up,
              then pack), apply-kept (catch up, then apply the kept writes) or pack-postings

Either way it then applies, in the order they came, the writes that store-deliberation,
feedback-loop, outcome-score and memory-capture kept for later (one process at a time does). Started
in the background it has a deadline of 10 minutes and gives each kept write 60 s: one that needs more
is set aside (cache/deferred/*.failed, cairn doctor fails on it) and applied, without a bound, by
the next cairn rebuild --continue run at a terminal.

A full rebuild empties the packed lists and packs them again: at once for a small index, in the
background (cairn rebuild --continue --job pack-postings) for a large one.

example:
  git pull && cairn rebuild
`,
  flags: { boolean: ['continue'], string: ['job'] },
  deadlineMs: 0,
  run(ctx) {
    const started = Date.now();
    const store = ctx.store();
    const steps = chosenSteps(ctx.args.continue === true, ctx.args.job as string | undefined);
    const output: Record<string, unknown> = {};
    if (steps.has('catch-up')) {
      const progress = ctx.progress(ctx.args.continue ? 'applying events' : 'replaying events');
      const report = ctx.args.continue ? continuePatterns(store, progress) : rebuildPatterns(store, progress);
      const skipped = report.skipped ? `, skipped ${report.skipped} unreadable lines` : '';
      const verb = ctx.args.continue ? 'applied' : 'replayed';
      ctx.log.info(`${verb} ${report.applied} events${skipped} in ${Date.now() - started} ms; the index is up to date`);
      Object.assign(output, report);
    }
    if (steps.has('apply-kept')) {
      const deferred = runDeferred(store);
      if (deferred) ctx.log.info(`applied ${deferred} write(s) kept while the index was catching up`);
      const holder = deferredCount(store.dir) ? applier(store.dir) : undefined;
      if (holder) ctx.log.info(`the kept writes still waiting are applied by another process (cache/deferred.lock ${holder})`);
      output.deferred = deferred;
    }
    if (steps.has('pack')) {
      // A replay empties the packed posting lists: the first writers read them packed again once they
      // are packed here (--continue has no deadline of its own; a small index), or in the background
      // for a large index (packLater).
      const pack = ctx.args.continue || !packLater(store);
      if (pack) ctx.deadline.check('packing the posting lists'); // a background job's bound (lib/store/background.ts)
      const packed = pack ? packPostingLists(patternDb(store), store.project) : 0;
      if (packed) ctx.log.info(`packed ${packed} posting list(s)`);
      output.packed = packed;
    }
    if (ctx.args.json) ctx.json(output);
  },
};

/** A full rebuild and `--continue` take every step; `--continue --job NAME` those of the background job NAME. */
function chosenSteps(continuing: boolean, job: string | undefined): Set<RebuildStep> {
  if (job === undefined) return new Set(REBUILD_STEPS);
  if (!continuing || !JOBS.includes(job)) throw new CairnError('usage', `--job takes, with --continue, one of ${JOBS.join(', ')}`);
  return new Set(BACKGROUND_JOBS[job as keyof typeof BACKGROUND_JOBS].steps);
}
