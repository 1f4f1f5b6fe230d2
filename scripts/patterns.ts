import type { Command, Context } from '../lib/cli/runner.js';
import { operandText, optionalInt, optionalString } from '../lib/cli/flags.js';
import { inputName, textFromFileOrStdin } from '../lib/cli/input.js';
import { CairnError } from '../lib/core/errors.js';
import { nearest } from '../lib/core/suggest.js';
import { sanitizeUntrusted } from '../lib/core/sanitize.js';
import { captureLanding } from '../lib/landing/capture.js';
import { parseLandingReport } from '../lib/landing/report.js';
import { projectLandings, type LandingPattern } from '../lib/landing/library.js';
import { compareRecent, searchPatterns } from '../lib/landing/search.js';

export const command: Command = {
  name: 'patterns',
  usage: `usage: cairn patterns [QUERY] [--limit N] [--json]
       cairn patterns capture [--report landing.json]

Landing patterns: how past work in this project was landed — its files, tags and the
commands that validated it (.cairn/landings.jsonl: committed, merged by union).

  QUERY            rank by relevance to these words (default --limit 3); without one, list all,
                   most recently updated first
  capture          add the landing report from --report or stdin (outcome-score --result pass
                   --report F does this too); the same work landed again merges into its entry
  --json           {query, patterns:[…]}; with capture {entry, merged}

example:
  cairn patterns "api endpoint"
  cairn patterns capture --report .kavi/reports/report-1.json
`,
  flags: { string: ['limit', 'report'] },
  operands: true,
  deadlineMs: 2000,
  async run(ctx) {
    if (ctx.args._[0] === 'capture') return capture(ctx);
    if (optionalString(ctx.args, 'report') !== null) {
      const word = ctx.args._[0] === undefined ? '' : `'${ctx.args._[0]}' is not capture, and `;
      throw new CairnError('usage', `${word}--report is only for capture: cairn patterns capture --report F`);
    }
    const query = operandText(ctx.args);
    const store = ctx.store();
    const entries = projectLandings(store.dir, store.project, (m) => ctx.log.warn(m));
    const limit = optionalInt(ctx.args, 'limit', 1);
    const found = query
      ? searchPatterns(entries, query, limit ?? 3).map((r) => ({ ...r.pattern, score: Number(r.score.toFixed(4)) }))
      : [...entries].sort(compareRecent).slice(0, limit ?? entries.length);
    if (ctx.args.json) ctx.json({ query: query || null, patterns: found });
    else if (found.length > 0) ctx.print(found.map(describe).join('\n'));
    else if (!query) ctx.log.info('no landing patterns yet (they are captured from landing reports)');
    else
      ctx.log.info(`no landing pattern matches '${query}'${nearest(query, ['capture']) ? ' (did you mean cairn patterns capture?)' : ''}`);
  },
};

async function capture(ctx: Context): Promise<void> {
  if (ctx.args._.length > 1) throw new CairnError('usage', 'capture takes no words; give the report with --report F or on stdin');
  const text = await textFromFileOrStdin(ctx, 'report');
  if (text.trim() === '') throw new CairnError('input', 'no landing report: give --report F, or pipe the report on stdin');
  const store = ctx.store({ create: true });
  const report = parseLandingReport(text, store.location.root, `the landing report (${inputName(ctx, 'report')})`);
  const { entry, merged, repeated } = captureLanding(store, report);
  ctx.log.info(`${repeated ? 'already captured' : merged ? 'merged into' : 'captured'} ${entry.id}: ${entry.title}`);
  if (ctx.args.json) ctx.json({ entry, merged, repeated });
}

/** A pattern for a person's terminal (sanitised: the file is shared through git). */
function describe(p: LandingPattern): string {
  const line = (text: string) => sanitizeUntrusted(text, { singleLine: true });
  return (
    [
      `${p.id}  ${line(p.title)}  (updated ${p.updatedAt.slice(0, 10)})`,
      p.tags.length > 0 ? `  tags:  ${line(p.tags.join(', '))}` : '',
      p.examplePaths.length > 0 ? `  files: ${line(p.examplePaths.join(', '))}` : '',
      p.commands.length > 0 ? `  run:   ${line(p.commands.join('; '))}` : '',
    ]
      .filter(Boolean)
      .join('\n') + '\n'
  );
}
