import { rmSync } from 'node:fs';
import type { Command } from '../lib/cli/runner.js';
import { optionalString } from '../lib/cli/flags.js';
import { CairnError } from '../lib/core/errors.js';
import { nowMs } from '../lib/core/clock.js';
import { HOOK_DEADLINE_MS } from '../lib/core/deadline.js';
import { readHookInput } from '../lib/hosts/payload.js';
import { envelopeFor, isEnvelopeFormat, wrapContext, ENVELOPE_FORMATS } from '../lib/hosts/envelope.js';
import { currentBranch } from '../lib/store/root.js';
import { autoRecall } from '../lib/knowledge/auto-recall.js';
import { hookCheck } from '../lib/hosts/check.js';
import { isConfigurableHost } from '../lib/hosts/registry.js';
import { bdTimeout, beadTitles } from '../lib/knowledge/beads.js';
import { changedFiles } from '../lib/knowledge/context.js';
import { shownKey, shownType } from '../lib/knowledge/render.js';

export const command: Command = {
  name: 'auto-recall',
  usage: `usage: auto-recall [--format claude|codex|gemini|cursor|text] [--json]
                   (a SessionStart or UserPromptSubmit payload on stdin)

Prints the knowledge relevant to this session (SPEC §4.4), fenced as untrusted background, for
the host to add to the agent's context. The query comes from the prompt, the titles of beads in
progress and open (bd, when the project has .beads/ and bd is on PATH; waited for at most
config knowledge.bdTimeoutMs, 400), the git branch and the
files changed since git last wrote its index; the most distinctive terms are searched. Up to 10
entries within the token budget (config knowledge.budget, 1000) and 9,000 characters; with no
terms or no hits, the 10 newest. Landing patterns and a fresh session-state.md (shown once) follow.
Nothing relevant, nothing printed.

  --format F  the envelope: claude (default for a payload with hook_event_name), codex, gemini,
              cursor, or text (the block as it is)
  --json      {"text", "entries":[{key,type,score}], "fallback", "terms", "source"} instead

example:
  echo '{"hook_event_name":"SessionStart","cwd":"'$PWD'","source":"startup"}' | auto-recall
`,
  flags: { string: ['format'] },
  deadlineMs: HOOK_DEADLINE_MS,
  async run(ctx) {
    const format = optionalString(ctx.args, 'format');
    if (format !== null && !isEnvelopeFormat(format))
      throw new CairnError('usage', `--format must be one of ${ENVELOPE_FORMATS.join(', ')}`);
    const input = readHookInput(await ctx.stdin());
    const store = ctx.store({ payloadCwd: input.cwd });
    const { root } = store.location;
    // bd runs while the index is brought up to date (started by the gate, as a rule: auto-recall.gate.ts)
    const early = ctx.gate?.beads;
    const beads = early?.root === root ? early.titles : beadTitles(root, bdTimeout(store.config, ctx.deadline));
    // the host runs this hook, but maybe not the others (a Codex hook not trusted, an outdated one): say so
    // here, where someone reads it. The host is the one --format names (Codex's SessionStart reads as Claude's).
    const host = format ?? input.host;
    const hooks = isConfigurableHost(host) ? hookCheck(root, host, process.env, { programs: false }) : null;
    const problem = hooks?.status === 'fail' ? `${hooks.name}: ${hooks.detail}` : undefined;
    const context = { prompt: input.prompt, branch: currentBranch(root), changedFiles: changedFiles(root) };
    const recall = await autoRecall(store, context, beads, nowMs(), problem);
    if (ctx.args.json) {
      const entries = recall.entries.map((e) => ({ key: shownKey(e.key), type: shownType(e.type), score: e.score }));
      ctx.json({ text: recall.text, entries, fallback: recall.fallback, terms: recall.terms, source: recall.source });
    } else {
      ctx.print(wrapContext(format ?? envelopeFor(input), input.event ?? 'SessionStart', recall.text));
    }
    if (recall.sessionState) rmSync(recall.sessionState, { force: true }); // shown once (SPEC §4.4)
  },
};
