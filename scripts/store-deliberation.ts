import type { Command } from '../lib/cli/runner.js';
import { list, optionalInt, optionalString, requiredString } from '../lib/cli/flags.js';
import { textFromFileOrStdin } from '../lib/cli/input.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { warnUnknownRoles } from '../lib/patterns/roles.js';

export const command: Command = {
  name: 'store-deliberation',
  usage: `usage: store-deliberation --role R [--issue I] [--run ID] [--phase P] [--iteration N]
                          [--labels a,b] [--files x,y] [--file PATH] [--json]

Stores an agent's deliberation (from --file or stdin) and observes the patterns in its
"Accumulated Patterns" section and its verdict-json findings. Secrets in the text are redacted
before anything is kept (the artifact in .cairn/artifacts/deliberations/ too); pattern texts and
finding summaries are kept sanitised, as format-patterns shows them.

  --json      print the stored ids and patterns on stdout
  --strict    exit non-zero on any error instead of failing open

example:
  store-deliberation --role auditor --issue LED-101 --run r1 --phase plan --file auditor.md
`,
  flags: { string: ['role', 'issue', 'run', 'phase', 'iteration', 'file'], list: ['labels', 'files'] },
  deadlineMs: 2000,
  deferrable: true,
  async run(ctx) {
    const role = requiredString(ctx.args, 'role');
    const iteration = optionalInt(ctx.args, 'iteration', 0) ?? null;
    const text = await textFromFileOrStdin(ctx, 'file');
    const store = ctx.store({ create: true });
    warnUnknownRoles(store, role);
    const result = storeDeliberation(store, {
      text,
      role,
      issue: optionalString(ctx.args, 'issue'),
      run: optionalString(ctx.args, 'run'),
      phase: optionalString(ctx.args, 'phase'),
      iteration,
      labels: list(ctx.args, 'labels'),
      files: list(ctx.args, 'files'),
    });
    for (const problem of result.problems) ctx.log.warn(problem);
    const count = (s: string) => result.patterns.filter((p) => p.status === s).length;
    const linked = result.links.filter((l) => l.match !== 'self').length;
    ctx.log.info(
      result.alreadyStored
        ? `already stored as ${result.deliberation} for this role and issue/run; nothing changed`
        : `stored ${result.deliberation} (${result.evidence}${result.verdict ? `, ${result.verdict.effective}` : ''}): ` +
            `${result.patterns.length} patterns — ${count('new')} new, ${count('seen')} seen again, ` +
            `${count('merged')} merged, ${count('echo')} echoes; ` +
            `${result.links.length} findings — ${linked} linked to known patterns, ${result.links.length - linked} stated as their own`,
    );
    if (ctx.args.json) {
      const { deliberation, evidence, verdict, patterns, links, alreadyStored } = result;
      ctx.json({ deliberation, alreadyStored, evidence, verdict: verdict?.effective ?? null, patterns, links });
    }
  },
};
