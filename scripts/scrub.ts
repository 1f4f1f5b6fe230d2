import { relative } from 'node:path';
import type { Command } from '../lib/cli/runner.js';
import { nowMs } from '../lib/core/clock.js';
import { rebuildPatterns } from '../lib/events/log.js';
import { knowledgeFollowers } from '../lib/knowledge/index.js';
import { landingLogPath, libraryPath } from '../lib/landing/library.js';
import { backupDirFor, committedLogs, countSecrets, scrubFile } from '../lib/store/scrub.js';

/** What a scrub cannot do, said every time it changes something (SPEC §4.6). */
const HISTORY = `The git history still holds the originals, in every commit that had them. A secret that was pushed
is compromised: rotate it first. Then commit the scrubbed logs, and purge the originals from the history:
  git filter-repo --replace-text secrets.txt     (one secret a line; or: bfg --replace-text secrets.txt)
  git push --force --all && git push --force --tags
and have every clone re-clone: old clones, forks and caches keep the originals.`;

export const command: Command = {
  name: 'scrub',
  usage: `usage: cairn scrub [--dry-run] [--json]

Rewrites the committed logs — events.jsonl, memory/knowledge.jsonl, memory/knowledge.archive.jsonl,
landings.jsonl and an older cairn's landing-patterns.json — with every secret in them redacted (SPEC §4.6): what a log written
before the redactor saw every text, or by a teammate's older cairn, holds. cairn doctor says how
many lines do. It is the one rewrite of an append-only log cairn makes: under each log's lock, by
write-temp-then-rename, after a copy of each file it changes in .cairn/cache/scrub-backup-<time>/
(never committed). A line without a secret stays byte for byte, ids stay as written (a pattern whose
text held a secret keeps its id, so the events that name it still do), and the indexes are rebuilt
from the rewritten logs; another clone replays them on its next command after the pull. A knowledge
key made from a secret before it was redacted keeps a lower-cased piece of it (the key names the
entry in every clone): rotating the credential covers it.

${HISTORY}

  --dry-run   count the lines that hold secrets; change nothing
  --json      {dry_run, files:[{file, lines}], backup}

example:
  cairn scrub --dry-run && cairn scrub && git commit -am "cairn: scrub secrets from the logs"
`,
  flags: { boolean: ['dry-run'] },
  deadlineMs: 0,
  run(ctx) {
    const store = ctx.store();
    const dryRun = Boolean(ctx.args['dry-run']);
    const backupDir = backupDirFor(store.dir, nowMs());
    const targets = committedLogs(store, { log: landingLogPath(store.dir), library: libraryPath(store.dir) });
    const files = targets.map((target) => ({
      file: relative(store.dir, target.path),
      lines: dryRun ? countSecrets(target) : scrubFile(target, { deadline: ctx.deadline, within: store.dir, backupDir }),
    }));
    const changed = (path: string) => files[targets.findIndex((t) => t.path === path)].lines > 0;
    // The follower replays a log whose prefix changed; rebuilding here makes sure of it on this clone.
    if (!dryRun && changed(store.eventsPath)) rebuildPatterns(store);
    const knowledge = knowledgeFollowers(store);
    if (!dryRun && changed(store.knowledgePath)) store.rebuildIndex(knowledge.log);
    if (!dryRun && changed(store.archivePath)) store.rebuildIndex(knowledge.archive);
    const total = files.reduce((n, f) => n + f.lines, 0);
    const backup = !dryRun && total > 0 ? relative(store.location.root, backupDir) : null;
    if (ctx.args.json) {
      ctx.json({ dryRun, files, backup });
      return;
    }
    if (total === 0) {
      ctx.log.info('no secrets in the committed logs');
      return;
    }
    const where = files.filter((f) => f.lines > 0).map((f) => `  ${f.file}: ${f.lines} line(s)`);
    const head = dryRun ? `${total} line(s) hold secrets (cairn scrub redacts them):` : `redacted the secrets of ${total} line(s):`;
    const kept = backup ? [`The originals are in ${backup}/ (never committed): delete it once you are done.`] : [];
    ctx.print([head, ...where, ...kept, HISTORY].join('\n') + '\n');
  },
};
