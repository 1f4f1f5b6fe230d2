import type { Command } from '../lib/cli/runner.js';
import { requiredOperand, requiredString } from '../lib/cli/flags.js';
import { deprecatePattern } from '../lib/patterns/lifecycle.js';

export const command: Command = {
  name: 'deprecate',
  usage: `usage: cairn deprecate <pattern-id|id-prefix|text> --reason TEXT [--json]

Deprecates a pattern: it is never injected again (cairn promote brings it back). The reason
is recorded in the event log.

example:
  cairn deprecate p3f9a2 --reason "we dropped the man page"
`,
  flags: { string: ['reason'] },
  operands: true,
  deadlineMs: 0,
  person: true,
  run(ctx) {
    const ref = requiredOperand(ctx.args, 'name a pattern: cairn deprecate <id|text> --reason TEXT');
    const { pattern: p, changed } = deprecatePattern(ctx.store(), ref, requiredString(ctx.args, 'reason'));
    ctx.log.info(changed ? `deprecated ${p.id} (${p.role}): ${p.text}` : `${p.id} (${p.role}) is already deprecated; nothing recorded`);
    if (ctx.args.json) ctx.json({ id: p.id, role: p.role, lifecycle: p.lifecycle, changed, text: p.text });
  },
};
