import type { Command } from '../lib/cli/runner.js';
import { list } from '../lib/cli/flags.js';
import { listScored, renderList } from '../lib/patterns/lifecycle.js';

export const command: Command = {
  name: 'list',
  usage: `usage: cairn list [--role R] [--state S] [--regressions] [--json]

Lists this project's patterns, best first: id, role, lifecycle, score (for its own role, now,
without context), sightings, successes, ignores, reinforcements, track record and text.
Deprecated patterns are listed only with --state deprecated.

  --role R       only these roles (comma list)
  --state S      only these lifecycles: observed, candidate, verified, active, deprecated
  --regressions  only patterns a validator found regressed
  --json         {patterns: [...]}

example:
  cairn list --role auditor --state verified,active
`,
  flags: { list: ['role', 'state'], boolean: ['regressions'] },
  deadlineMs: 0,
  person: true,
  run(ctx) {
    const rows = listScored(ctx.store(), {
      roles: list(ctx.args, 'role').map((r) => r.toLowerCase()),
      states: list(ctx.args, 'state').map((s) => s.toLowerCase()),
      regressions: Boolean(ctx.args.regressions),
    });
    if (ctx.args.json) {
      const patterns = rows.map(({ pattern: p, score, record }) => ({
        id: p.id,
        role: p.role,
        category: p.category,
        lifecycle: p.lifecycle,
        regressed: Boolean(p.regressed),
        score: Math.round(score * 1e4) / 1e4,
        record,
        sightings: p.sightings,
        success_count: p.success_count,
        ignore_count: p.ignore_count,
        ignore_weight: p.ignore_weight,
        reinforcement_count: p.reinforcement_count,
        promoted_by: p.promoted_by,
        reason: p.reason,
        text: p.text,
      }));
      ctx.json({ patterns });
      return;
    }
    if (rows.length === 0) {
      ctx.log.info('no patterns match');
      return;
    }
    ctx.print(renderList(rows).join('\n') + '\n');
  },
};
