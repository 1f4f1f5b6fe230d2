import type { Command } from '../lib/cli/runner.js';
import { existsSync } from 'node:fs';
import { nowMs } from '../lib/core/clock.js';
import { describeError } from '../lib/core/errors.js';
import { activeCacheFresh, sanitizeKnowledge } from '../lib/knowledge/sanitize.js';
import { knowledgeDb } from '../lib/knowledge/index.js';
import { countLineTokens } from '../lib/knowledge/auto-recall.js';

export const command: Command = {
  name: 'sanitize',
  usage: `usage: cairn sanitize [--json]

Builds the local working set of the knowledge log (SPEC §4.5): .cairn/memory/knowledge.active.jsonl
and its audit, knowledge.audit.jsonl. Unreadable lines, superseded entries and shell residue
(commands stored as notes, pasted issue descriptions) are left out and glued-on command tails
trimmed; duplicates by key and by content keep the newest; file paths an entry names must exist
under the project root and backticked symbols must appear in its files — an entry whose files are
all gone is dropped as stale, one with some anchors missing is marked needs_review. The shared log
is never changed. auto-recall reads the active cache while it matches the log; memory-capture runs
this in the background after a capture, and auto-recall when it met lines whose tokens were not yet
counted (they are counted here, with the tokenizer, for the next session start).

  --json       the summary: {read, active, unreadable, superseded, noise, trimmed, duplicateKey,
               duplicateContent, stale, needsReview}
  --catch-up   then wait out the sanitiser's interval (knowledge.sanitizeEveryMs) and build again if
               captures came meanwhile (how memory-capture starts it: they start no run of their own)

example:
  cairn sanitize && tail -1 .cairn/memory/knowledge.audit.jsonl
`,
  flags: { boolean: ['catch-up'] },
  deadlineMs: 0,
  async run(ctx) {
    const store = ctx.store();
    const build = () => {
      try {
        // the log's index first (built afresh, it is most of the run): not while the sanitiser holds its tables
        knowledgeDb(store, ['log'], { newest: true });
      } catch {
        // said below, where the index is needed again
      }
      const built = sanitizeKnowledge(store, nowMs(), ctx.progress('checking entries'));
      try {
        // index the new cache now, and count the tokens of the lines a session start shows, so it need not
        const db = knowledgeDb(store, ['log', 'active'], { newest: true });
        countLineTokens(db, store.config.tokenizer.encoding, ctx.deadline);
      } catch (err) {
        ctx.log.warn(
          `the active cache is written; indexing it and counting its tokens are left to the next reader (${describeError(err)})`,
        );
      }
      return built;
    };
    let report = build();
    if (ctx.args['catch-up']) {
      // within its own deadline (a background job's: lib/store/background.ts), with time left to build
      const wait = Math.min(store.config.knowledge.sanitizeEveryMs, ctx.deadline.remaining() / 2);
      await new Promise((resolve) => setTimeout(resolve, wait));
      // a project removed meanwhile (a worktree deleted, a throwaway demo) is not written again
      if (!existsSync(store.dir)) return;
      if (!activeCacheFresh(store)) report = build();
    }
    ctx.log.info(
      `${report.active} active of ${report.read} read: ${report.noise} shell residue, ` +
        `${report.duplicateKey + report.duplicateContent} duplicates, ` +
        `${report.stale} stale, ${report.needsReview} to review, ${report.superseded} superseded, ${report.unreadable} unreadable lines`,
    );
    if (ctx.args.json) ctx.json(report);
  },
};
