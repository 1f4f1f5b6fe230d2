import type { Command } from '../lib/cli/runner.js';
import { locate } from '../lib/store/root.js';
import { initStore } from '../lib/store/init.js';
import { optionalString } from '../lib/cli/flags.js';

export const command: Command = {
  name: 'init',
  usage: `usage: cairn init [--root DIR] [--dir DIR]

Creates the store (.cairn/ at the project root, or --dir) with a .gitignore for derived files
and a .gitattributes that merges the committed JSONL logs by union. Existing lines are kept.
Prints the cron line for maintenance.

example:
  cd my-repo && cairn init && git add .cairn
`,
  flags: {},
  deadlineMs: 0,
  run(ctx) {
    const loc = locate({ root: optionalString(ctx.args, 'root') ?? undefined, dir: optionalString(ctx.args, 'dir') ?? undefined });
    const { created, added } = initStore(loc.dir);
    ctx.log.info(`${created ? 'created' : 'updated'} ${loc.dir}${added.length ? ` (${added.join('; ')})` : ''}`);
    ctx.log.info(`project id ${loc.project}; for cron: 17 3 * * * cd ${loc.root} && npx cairn maintain`);
  },
};
