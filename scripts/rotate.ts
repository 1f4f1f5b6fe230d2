import type { Command } from '../lib/cli/runner.js';
import { optionalString } from '../lib/cli/flags.js';
import { CairnError } from '../lib/core/errors.js';
import { nowMs } from '../lib/core/clock.js';
import { rotate, ROTATE_ABOVE, KEEP_NEWEST } from '../lib/knowledge/rotate.js';
import { compactArtifacts, parseDays } from '../lib/store/artifacts.js';
import { join } from 'node:path';

export const command: Command = {
  name: 'rotate',
  usage: `usage: cairn rotate [--older-than 90d] [--json]

Keeps the knowledge log small (SPEC §4.5): when .cairn/memory/knowledge.jsonl has more than
${ROTATE_ABOVE} lines, the oldest move to knowledge.archive.jsonl so that the newest ${KEEP_NEWEST} stay. The move is
journalled under the log's lock: killed at any point, the next run (or capture) finishes it, and no
entry is lost or doubled. Also gzips artifacts (full deliberation texts) older than --older-than.

  --older-than D  compact artifacts last changed more than D days ago (90d)
  --json          {"moved", "kept", "recovered", "artifacts": {"compacted", "bytesBefore", "bytesAfter"}}

example (cron; \`cairn init\` prints this line with the paths your machine needs):
  27 3 * * * cd /path/to/repo && node_modules/.bin/cairn rotate --quiet
`,
  flags: { string: ['older-than'] },
  deadlineMs: 0,
  run(ctx) {
    const olderThan = parseDays(optionalString(ctx.args, 'older-than') ?? '90d');
    if (olderThan === undefined) throw new CairnError('usage', '--older-than takes a number of days, like 90d');
    const store = ctx.store();
    const report = rotate(store.knowledgePath, store.archivePath, {
      deadline: ctx.deadline,
      within: store.dir,
      countFile: store.lineCountPath,
    });
    const artifacts = compactArtifacts(join(store.dir, 'artifacts'), nowMs() - olderThan);
    ctx.log.info(
      `${report.moved ? `moved ${report.moved} entries to the archive, kept ${report.kept}` : `nothing to rotate (${report.kept} lines)`}` +
        `${report.recovered ? `; finished an interrupted rotation of ${report.recovered} lines` : ''}` +
        (artifacts.compacted
          ? `; gzipped ${artifacts.compacted} artifacts (${artifacts.bytesBefore} → ${artifacts.bytesAfter} bytes)`
          : ''),
    );
    if (ctx.args.json) ctx.json({ ...report, artifacts });
  },
};
