import type { Command } from '../lib/cli/runner.js';
import { requiredOperand, requiredString } from '../lib/cli/flags.js';
import { promotePattern } from '../lib/patterns/lifecycle.js';

export const command: Command = {
  name: 'promote',
  usage: `usage: cairn promote <pattern-id|id-prefix|text> --by NAME --reason TEXT [--json]

Makes a pattern active: a person's decision, recorded in the event log with who and why.
Active patterns never decay. This is the only way to active (observation stops at verified),
and the only way back for a deprecated pattern.

example:
  cairn promote p3f9a2 --by alice --reason "caught two real migration bugs this month"
`,
  flags: { string: ['by', 'reason'] },
  operands: true,
  deadlineMs: 0,
  person: true,
  run(ctx) {
    const ref = requiredOperand(ctx.args, 'name a pattern: cairn promote <id|text> --by NAME --reason TEXT');
    const { pattern: p, changed } = promotePattern(ctx.store(), ref, requiredString(ctx.args, 'by'), requiredString(ctx.args, 'reason'));
    ctx.log.info(changed ? `promoted ${p.id} (${p.role}) to active: ${p.text}` : `${p.id} (${p.role}) is already active; nothing recorded`);
    if (ctx.args.json) ctx.json({ id: p.id, role: p.role, lifecycle: p.lifecycle, changed, text: p.text });
  },
};
