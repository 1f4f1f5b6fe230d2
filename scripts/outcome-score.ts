import type { Command } from '../lib/cli/runner.js';
import { optionalString, requiredString } from '../lib/cli/flags.js';
import { scoreOutcome } from '../lib/patterns/outcome.js';

export const command: Command = {
  name: 'outcome-score',
  usage: `usage: outcome-score --issue I [--run ID] --result pass|fail [--dry-run] [--json]

When the pipeline ends, grades once every pattern applied in the issue/run — echoed by the
role it was injected into, or linked to a finding, and not dismissed: pass → one more
success; fail → ignore weight + 0.5 × the pattern's role weight. Running it again for the
same issue/run is reported and changes nothing.

example:
  outcome-score --issue LED-101 --run r1 --result pass
`,
  flags: { string: ['issue', 'run', 'result'], boolean: ['dry-run'] },
  deadlineMs: 2000,
  run(ctx) {
    const report = scoreOutcome(ctx.store(), requiredString(ctx.args, 'issue'), optionalString(ctx.args, 'run'), requiredString(ctx.args, 'result'), Boolean(ctx.args['dry-run']));
    const scope = `${report.issue}${report.run ? `/${report.run}` : ''}`;
    if (report.previous) ctx.log.warn(`${scope} was already graded '${report.previous}'; nothing changed`);
    else ctx.log.info(`${scope} ${report.result}: ${report.patterns.length} applied pattern(s) ${report.applied ? 'graded' : 'would be graded'}`);
    if (ctx.args.json) ctx.print(JSON.stringify(report) + '\n');
  },
};
