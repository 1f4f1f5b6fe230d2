import { locationFlags, version, type Command } from '../lib/cli/runner.js';
import { serveMcp } from '../lib/mcp/server.js';

export const command: Command = {
  name: 'mcp',
  usage: `usage: cairn mcp [--root DIR] [--dir DIR] [--project ID]

Serves this project's memory over MCP (stdio) to an agent host, which starts it: cairn init --mcp
registers it with Claude Code, Codex, Gemini CLI, Cursor and OpenCode. The project is found as the
hooks find it (--root, $CAIRN_ROOT, $CLAUDE_PROJECT_DIR, else the current directory, then up to
.cairn/ or .git). Tools:

  recall     search the knowledge log (query, type?, limit?): entries fenced as untrusted notes
  remember   keep a lesson (type, content, bead?): memory-capture's capture, sanitised, secrets
             redacted, deduplicated; the first one in a git work tree creates .cairn/
  patterns   the block format-patterns would print for a role (role, query?, files?, labels?),
             with short ids; records nothing
  explain    a pattern's record, score factors and history (pattern: id or text)
  landings   how similar work was landed (query, limit?)

Each call has its own deadline (CAIRN_DEADLINE_MS, 2000 ms) and answers within 9,000 characters.
A failing call is a tool error in one line, recorded for cairn doctor; the server stays up.

example (what a host runs; cairn doctor checks it answers):
  cairn mcp --root ~/src/my-repo
`,
  flags: {},
  deadlineMs: 0,
  server: true,
  async run(ctx) {
    await serveMcp({ location: locationFlags(ctx.args), strict: ctx.strict, version: version() });
  },
};
