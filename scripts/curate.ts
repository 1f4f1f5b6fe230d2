import { mkdirSync } from 'node:fs';
import { isatty } from 'node:tty';
import { dirname, join, resolve } from 'node:path';
import type { Command } from '../lib/cli/runner.js';
import { optionalString } from '../lib/cli/flags.js';
import { CairnError } from '../lib/core/errors.js';
import { applyProposal, proposeCuration, writeProposal } from '../lib/knowledge/curate.js';
import { commandLinePath } from '../lib/cli/input.js';

export const command: Command = {
  name: 'curate',
  usage: `usage: cairn curate --dry-run [--out FILE] [--json]
       cairn curate --apply FILE --confirm HASH

Review-gated curation of the shared knowledge log (SPEC §4.5). --dry-run gathers candidates —
the same content under several keys (the newest becomes canonical, the others superseded),
entries another one says it supersedes, and entries whose named files no longer exist
(needs_review) — and writes a proposal (default .cairn/cache/curation-proposal.json): the exact
lines it would append, each with a review_reason, and their hash. Nothing is written to the log.

--apply appends the proposal's lines only if they still hash to the HASH you reviewed, and only
with --confirm: a hook (no terminal, no confirmation) can never apply. The log is only appended to;
lines whose entry already has that status are skipped.

  --dry-run       propose; prints the lines and the hash (--json: {"lines":[…],"hash","path"})
  --out FILE      where to write the proposal (directories that are not there are made)
  --apply FILE    append a reviewed proposal
  --confirm HASH  the hash printed by --dry-run, after review

example:
  cairn curate --dry-run && cairn curate --apply .cairn/cache/curation-proposal.json --confirm 3f9a…
`,
  flags: { string: ['out', 'apply', 'confirm'], boolean: ['dry-run'] },
  deadlineMs: 0,
  run(ctx) {
    const apply = optionalString(ctx.args, 'apply');
    if (apply === null && !ctx.args['dry-run']) throw new CairnError('usage', 'give --dry-run or --apply FILE --confirm HASH (see --help)');
    const store = ctx.store();
    if (apply === null) {
      const proposal = proposeCuration(store);
      const out = optionalString(ctx.args, 'out');
      const path = out === null ? join(store.dir, 'cache', 'curation-proposal.json') : resolve(out);
      // the user's path: its directories are made as asked
      if (out !== null) mkdirSync(dirname(path), { recursive: true });
      writeProposal(path, proposal, out === null ? store.dir : dirname(path));
      if (ctx.args.json) ctx.json({ ...proposal, path });
      else ctx.print(proposal.lines.map((l) => l + '\n').join('') + `hash ${proposal.hash}\n`);
      ctx.log.info(
        `${proposal.lines.length} line(s) proposed in ${path}; review them, then: cairn curate --apply ${path} --confirm ${proposal.hash}`,
      );
      return;
    }
    const confirm = optionalString(ctx.args, 'confirm');
    if (confirm === null) {
      const why = isatty(0) ? 'pass the hash you reviewed' : 'not from a hook or a script without a reviewed hash';
      throw new CairnError('usage', `--apply needs --confirm HASH (${why}); see cairn curate --dry-run`);
    }
    const applied = applyProposal(store, commandLinePath(apply, store.location.root, `--apply ${apply}`), confirm);
    ctx.log.info(`appended ${applied.appended} curation line(s)${applied.already ? `; ${applied.already} were already applied` : ''}`);
    if (ctx.args.json) ctx.json(applied);
  },
};
