import type { Command } from '../lib/cli/runner.js';
import { list, optionalString, requiredString } from '../lib/cli/flags.js';
import { feedbackSummary, runFeedback } from '../lib/patterns/feedback.js';
import { warnUnknownRoles } from '../lib/patterns/roles.js';
import { readTextFile } from '../lib/cli/input.js';

export const command: Command = {
  name: 'feedback-loop',
  usage: `usage: feedback-loop --adversarial-role A --validator-role V [--issue I] [--run ID] [--files x,y]
                     [--adversarial-file F] [--validator-file F] [--dry-run] [--json]

Reads the validator's verdict-json (from --validator-file, stdin, or V's latest stored
deliberation for the issue/run) and corrects A's patterns through the links of A's findings
(recorded when A's deliberation was stored; a text given with --adversarial-file is linked now):
  - each false_positives id penalises the patterns its finding applied, by A's weight (1.5
    sentinel/inspector, 1.0 others), earlier evidence aged first; a pattern that had been
    validated is flagged as a regression (regression:); it is not re-injected in this run; one
    that now meets cairn maintain's rules (≥ 3 ignores, under 20 % of its recent tested evidence
    held up) is deprecated (obsolete: when it had held up before);
  - a finding V keeps (must_fix, or V's own issues) reinforces the patterns it applied, and an
    effective PASS (FAIL with empty must_fix counts) reinforces the patterns applied in A's
    findings it let stand — both only when A's text shows L1/L2 evidence; the patterns A only
    echoed get untested credit; on that PASS, injected patterns A ignored are aged a day.

  --dry-run   print what would change, write nothing
  --json      the full account on stdout

example:
  feedback-loop --adversarial-role auditor --validator-role curator --issue LED-101 --run r1
`,
  flags: {
    string: ['adversarial-role', 'validator-role', 'issue', 'run', 'adversarial-file', 'validator-file'],
    list: ['files'],
    boolean: ['dry-run'],
  },
  deadlineMs: 2000,
  deferrable: true,
  async run(ctx) {
    const adversarialRole = requiredString(ctx.args, 'adversarial-role');
    const validatorRole = requiredString(ctx.args, 'validator-role');
    const fileFlag = async (flag: string) => {
      const path = optionalString(ctx.args, flag);
      return path === null ? undefined : readTextFile(ctx, flag, path);
    };
    const validatorText = (await fileFlag('validator-file')) ?? ((await ctx.stdin()) || undefined);
    const adversarialText = await fileFlag('adversarial-file');
    const store = ctx.store();
    warnUnknownRoles(store, adversarialRole, validatorRole);
    const report = runFeedback(store, {
      adversarialRole,
      validatorRole,
      issue: optionalString(ctx.args, 'issue'),
      run: optionalString(ctx.args, 'run'),
      files: list(ctx.args, 'files'),
      validatorText,
      adversarialText,
      dryRun: Boolean(ctx.args['dry-run']),
    });
    for (const p of report.problems) ctx.log.warn(p);
    for (const p of report.penalised.filter((x) => x.regressed)) {
      ctx.log.warn(`regression: ${p.pattern} had been validated and was dismissed as a false positive (${p.finding}): ${p.text}`);
    }
    for (const id of report.obsolete) {
      const p = report.penalised.find((x) => x.pattern === id)!;
      ctx.log.warn(`obsolete: ${id} had held up and is now dismissed more often than not; deprecated, it leaves the block: ${p.text}`);
    }
    for (const u of report.unmatched) ctx.log.warn(`unmatched false positive ${u.finding}: ${u.reason}`);
    ctx.log.info(feedbackSummary(report));
    if (ctx.args.json) ctx.json(report);
  },
};
