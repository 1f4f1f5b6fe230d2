import type { Command } from '../lib/cli/runner.js';
import { embedPatterns } from '../lib/patterns/embeddings.js';

export const command: Command = {
  name: 'embed',
  usage: `usage: cairn embed [--json]

Embeds every pattern text of the project that has no cached vector yet, 64 per provider call.
The provider is the executable in .cairn/config.json "embeddings": {"command": "..."}: it reads
{"id","text"} JSON lines on stdin and writes {"id","vector":[...]} lines on stdout. Vectors are
cached in the database (they survive cairn rebuild); format-patterns --query then ranks by
cosine similarity. Each call may take up to 60 s (CAIRN_DEADLINE_MS bounds the whole run).

  --json   {texts, cached, embedded, failed, dimensions}

example:
  cairn embed && format-patterns --role auditor --query "session token refresh"
`,
  flags: {},
  deadlineMs: 0,
  run(ctx) {
    const report = embedPatterns(ctx.store(), undefined, ctx.progress('embedding pattern texts'));
    ctx.log.info(
      `embedded ${report.embedded} of ${report.texts} pattern texts (${report.cached} already cached` +
        `${report.failed ? `, ${report.failed} failed` : ''}${report.dimensions ? `, ${report.dimensions} dimensions` : ''})`,
    );
    if (ctx.args.json) ctx.json(report);
  },
};
