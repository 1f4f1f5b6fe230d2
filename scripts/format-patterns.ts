import type { Command, Context } from '../lib/cli/runner.js';
import { list, optionalInt, optionalString, requiredString } from '../lib/cli/flags.js';
import { formatPatterns, recordInjection } from '../lib/patterns/format.js';
import { textFromFileOrStdin } from '../lib/cli/input.js';
import { embeddingRelevanceFor } from '../lib/patterns/relevance.js';
import { sameKindRoles } from '../lib/store/config.js';
import { CairnError } from '../lib/core/errors.js';
import { warnUnknownRoles } from '../lib/patterns/roles.js';
import { landingPatternLines } from '../lib/landing/search.js';

export const command: Command = {
  name: 'format-patterns',
  usage: `usage: format-patterns --role R [--issue I] [--run ID] [--labels a,b] [--files x,y] [--phase P]
                       [--query TEXT | --query-file F] [--budget N] [--remaining-tokens N]
                       [--ids] [--dry-run] [--json]

Prints the role's best patterns as a === HISTORICAL PATTERNS (role) === block that fits the
token budget (800 for adversarial roles, 500 for others; config.json "budgets"). Prints
nothing when there is nothing to inject or too little room. With --issue/--run it records
which patterns were injected, for feedback-loop and outcome-score.

  --ids                  start each line with the pattern's short id ([p3f2a1c]); a finding that
                         cites it ("[p3f2a1c]" in its summary, or "patterns": [...]) is linked to it
  --dry-run              print the block without recording the injection
  --query TEXT           rank by relevance to this text too (0.6 relevance + 0.4 score): cosine
                         similarity with an embeddings provider (cairn embed), else BM25 text match;
                         the top 3 matching landing patterns (cairn patterns) follow the block
  --query-file F         the query text from a file (e.g. the issue description)
  --remaining-tokens N   room left in the prompt: budget = min(budget, N - 2000); under 150, skip
  --json                 {role, budget, tokens, path, patterns, block, basis}, and landing with a query;
                         each pattern's text as the block shows it (sanitised, secrets redacted)

example:
  format-patterns --role auditor --issue LED-101 --run r1 --labels cli --files src/cli/status.ts \\
                  --query "add --json to the status command"
`,
  flags: {
    string: ['role', 'issue', 'run', 'phase', 'query', 'query-file', 'budget', 'remaining-tokens'],
    list: ['labels', 'files'],
    boolean: ['ids', 'dry-run'],
  },
  deadlineMs: 2000,
  async run(ctx) {
    const role = requiredString(ctx.args, 'role');
    const issue = optionalString(ctx.args, 'issue');
    const run = optionalString(ctx.args, 'run');
    const budget = optionalInt(ctx.args, 'budget', 1);
    const remainingTokens = optionalInt(ctx.args, 'remaining-tokens', 0);
    const query = await queryText(ctx);
    const store = ctx.store();
    warnUnknownRoles(store, role);
    const relevance = query === null ? undefined : embeddingRelevanceFor(store, query, sameKindRoles(store.config, role.toLowerCase()));
    const result = formatPatterns(store, {
      role,
      issue,
      run,
      labels: list(ctx.args, 'labels'),
      files: list(ctx.args, 'files'),
      phase: optionalString(ctx.args, 'phase'),
      budget,
      remainingTokens,
      query: query ?? undefined,
      relevance,
      exactTokens: Boolean(ctx.args.json),
      ids: Boolean(ctx.args.ids),
    });
    // With a query, the top landing patterns follow the block (SPEC §5), unless there was no room at all.
    const noRoom = remainingTokens !== undefined && result.path === 'skipped';
    const landing = query === null || noRoom ? [] : landingPatternLines(store.dir, store.project, query);
    // Decide, record, then print: once recorded the block is printed (the append is the commit
    // point); whatever fails before the append records nothing.
    if (!ctx.args['dry-run']) recordInjection(store, result, issue, run);
    if (ctx.args.json) {
      const { role: r, budget: b, tokens, path, patterns, block, basis } = result;
      ctx.json({ role: r, budget: b, tokens, path, patterns, block, basis, ...(query === null ? {} : { landing }) });
    } else {
      if (result.block) ctx.print(result.block + '\n');
      if (landing.length > 0) ctx.print(landing.join('\n') + '\n');
    }
  },
};

async function queryText(ctx: Context): Promise<string | null> {
  const text = optionalString(ctx.args, 'query');
  if (optionalString(ctx.args, 'query-file') === null) return text;
  if (text !== null) throw new CairnError('usage', 'give --query or --query-file, not both');
  return textFromFileOrStdin(ctx, 'query-file');
}
