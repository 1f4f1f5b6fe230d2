import type { Command, Context } from '../lib/cli/runner.js';
import { optionalString } from '../lib/cli/flags.js';
import { CairnError } from '../lib/core/errors.js';
import { nowMs } from '../lib/core/clock.js';
import { HOOK_DEADLINE_MS } from '../lib/core/deadline.js';
import { readHookInput } from '../lib/hosts/payload.js';
import { bdComments, mayCapture } from '../lib/knowledge/bd-command.js';
import { commentsFromBdJson } from '../lib/knowledge/bd-json.js';
import { captureComments, type Comment } from '../lib/knowledge/capture.js';
import { scheduleSanitize } from '../lib/knowledge/schedule.js';
import { KNOWLEDGE_TYPES, parseTypedText } from '../lib/knowledge/entry.js';

// Built behind a gate (memory-capture.gate.ts): a hook payload whose command cannot add a comment ends
// the process before this module is loaded.

export const command: Command = {
  name: 'memory-capture',
  usage: `usage: memory-capture                          (a PostToolUse / AfterTool / afterShellExecution payload on stdin)
       memory-capture --bead ID --text "LEARNED: ..."
       memory-capture --from-bd-json                (bd comments ID --json on stdin)

Captures typed knowledge into .cairn/memory/knowledge.jsonl (SPEC §4.2). From a hook payload it
finds every \`bd comments add ID "TYPE: ..."\` the shell command ran (chained, multi-line, quoted);
a failed run captures nothing. Types: LEARNED, DECISION, FACT, PATTERN, INVESTIGATION, DEVIATION,
MUST-CHECK; SKIP: stores nothing. Content is sanitised, secrets are redacted, duplicates are not
appended again, and a key taken by other content gets -2, -3. The first capture in a git work tree
creates .cairn/.

  --bead ID --text T  capture one comment
  --from-bd-json      backfill from \`bd comments ID --json\` output (an array, or JSON lines)
  --json              print what was captured: {"captured":[{key,type,status}],"ignored":N}

example:
  bd comments beads-abc --json | memory-capture --from-bd-json --json
`,
  flags: { string: ['bead', 'text'], boolean: ['from-bd-json'] },
  deadlineMs: HOOK_DEADLINE_MS,
  deferrable: true,
  async run(ctx) {
    const { comments, cwd } = await commentsToCapture(ctx);
    if (comments.length === 0) return; // the hot path: most shell commands add no comment
    if (comments[0].source === 'cli' && parseTypedText(comments[0].text) === undefined) {
      // typed by a person: say why nothing was kept instead of exiting in silence
      throw new CairnError(
        'usage',
        `--text needs a type prefix to be knowledge (${KNOWLEDGE_TYPES.map((t) => `${t.toUpperCase()}:`).join(' ')} ` +
          `or SKIP:), in capitals; nothing was captured`,
      );
    }
    const store = ctx.store({ payloadCwd: cwd, create: true });
    const report = captureComments(store, comments);
    const added = report.appended.filter((a) => a.status === 'added');
    if (added.length) scheduleSanitize(store);
    for (const a of report.appended.slice(0, NAMED))
      ctx.log.info(
        `${a.status === 'added' ? 'captured' : 'already known:'} ${a.entry.key}${a.entry.bead ? ` (bead ${a.entry.bead})` : ''}`,
      );
    const rest = report.appended.slice(NAMED);
    if (rest.length)
      ctx.log.info(
        `and ${rest.filter((a) => a.status === 'added').length} more captured, ` +
          `${rest.filter((a) => a.status !== 'added').length} more already known`,
      );
    if (ctx.args.json) {
      const captured = report.appended.map((a) => ({ key: a.entry.key, type: a.entry.type, status: a.status }));
      ctx.json({ captured, ignored: report.ignored });
    }
  },
};

/**
 * Captures named one line each on stderr; a command of tens of thousands of comments gets one line
 * for the rest (a line each would spend the hook's deadline on stderr).
 */
const NAMED = 20;

async function commentsToCapture(ctx: Context): Promise<{ comments: Comment[]; cwd: string | null }> {
  const now = Math.floor(nowMs() / 1000);
  const text = optionalString(ctx.args, 'text');
  const bead = optionalString(ctx.args, 'bead');
  if (text !== null || bead !== null) {
    if (text === null || bead === null) throw new CairnError('usage', '--bead and --text go together');
    return { comments: [{ bead, text, ts: now, source: 'cli' }], cwd: null };
  }
  const stdin = await ctx.stdin();
  if (ctx.args['from-bd-json']) return { comments: commentsFromBdJson(stdin, now), cwd: null };
  const input = readHookInput(stdin);
  if (!mayCapture(input)) return { comments: [], cwd: input.cwd };
  // A command of tens of thousands of comments takes a while to read. Past the deadline the run is
  // kept for later in the store it would write to, opened first so that the runner can keep it (SPEC §2).
  const checkpoint = () => {
    if (!ctx.deadline.passed()) return;
    ctx.store({ payloadCwd: input.cwd, create: true });
    ctx.deadline.check('reading the shell command');
  };
  return {
    comments: bdComments(input.command, checkpoint).map((c) => ({ ...c, ts: now, source: 'hook' })),
    cwd: input.cwd,
  };
}
