import type { Command, Context } from '../lib/cli/runner.js';
import { optionalString, requiredString } from '../lib/cli/flags.js';
import { inputName, textFromFileOrStdin } from '../lib/cli/input.js';
import { scoreOutcome } from '../lib/patterns/outcome.js';
import { captureLanding, type Capture } from '../lib/landing/capture.js';
import { parseLandingReport, type LandingReport } from '../lib/landing/report.js';

export const command: Command = {
  name: 'outcome-score',
  usage: `usage: outcome-score --issue I [--run ID] --result pass|fail [--report landing.json] [--dry-run] [--json]

When the pipeline ends, grades once every pattern applied in the issue/run — echoed by the
role it was injected into, or linked to a finding, and not dismissed: pass → one more
success; fail → ignore weight + 0.5 × the pattern's role weight. Running it again for the
same issue/run is reported and changes nothing.

With a pass, a landing report (--report F, or on stdin) is also captured as a landing
pattern: how the work was done, for later work to start from (see cairn patterns).

example:
  outcome-score --issue LED-101 --run r1 --result pass --report .kavi/reports/report-1.json
`,
  flags: { string: ['issue', 'run', 'result', 'report'], boolean: ['dry-run'] },
  deadlineMs: 2000,
  deferrable: true,
  async run(ctx) {
    const issue = requiredString(ctx.args, 'issue');
    const run = optionalString(ctx.args, 'run');
    const result = requiredString(ctx.args, 'result');
    const dryRun = Boolean(ctx.args['dry-run']);
    const store = ctx.store();
    // Read the report before grading, so a report that cannot be read changes nothing (SPEC §2).
    const landing = result.trim().toLowerCase() === 'pass' ? await landingReport(ctx, store.location.root) : null;
    const report = scoreOutcome(store, issue, run, result, dryRun);
    const scope = `${report.issue}${report.run ? `/${report.run}` : ''}`;
    if (report.previous) ctx.log.warn(`${scope} was already graded '${report.previous}'; nothing changed`);
    else
      ctx.log.info(
        `${scope} ${report.result}: ${report.patterns.length} applied pattern(s) ${report.applied ? 'graded' : 'would be graded'}`,
      );
    let captured: Capture | null = null;
    if (landing && !dryRun) {
      captured = captureLanding(store, landing, { issue: report.issue, run: report.run });
      const how = captured.repeated ? 'already captured as' : captured.merged ? 'merged into' : 'captured as';
      ctx.log.info(`landing pattern ${how} ${captured.entry.id}`);
    }
    if (ctx.args.json) ctx.json(captured ? { ...report, landing: { id: captured.entry.id, merged: captured.merged } } : report);
  },
};

/** The landing report from --report F, else stdin; null when there is none (SPEC §3.8). */
async function landingReport(ctx: Context, root: string): Promise<LandingReport | null> {
  const text = await textFromFileOrStdin(ctx, 'report');
  return text.trim() === '' ? null : parseLandingReport(text, root, `the landing report (${inputName(ctx, 'report')})`);
}
