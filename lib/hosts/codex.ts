import type { Json } from '../core/json.js';
import { str } from './fields.js';
import { claudeEnvelope, readClaudeShaped } from './claude.js';
import type { HookInput } from './payload.js';
import { commandProgram, GIT_TOP_LEVEL, notInstalledMessage, orElsePrint, type HostHooks } from './settings.js';

// Codex CLI (developers.openai.com/codex/hooks; openai/codex codex-rs/hooks/schema): hooks.json in
// .codex/ with Claude's layout, payloads in Claude's shape plus turn_id on turn-scoped events, and
// output schemas that forbid unknown keys — the envelope carries hookEventName and additionalContext only.

const SHELL_TOOLS = new Set(['Bash', 'shell', 'local_shell', 'exec_command']);

export function isCodexPayload(p: Json): boolean {
  return str(p, 'turn_id') !== null;
}

export function readCodexPayload(p: Json): HookInput {
  return readClaudeShaped(p, 'codex', SHELL_TOOLS);
}

export const codexEnvelope = claudeEnvelope;

/**
 * .codex/hooks.json: SessionStart → auto-recall; PostToolUse on Bash → memory-capture. Synchronous:
 * `async` handlers are recent in Codex and a synchronous one works in every release; memory-capture
 * exits at once on a payload without a capture. Codex runs a project's hooks once the user trusts them.
 */
export const codexHooks: HostHooks = {
  file: '.codex/hooks.json',
  layout: 'nested',
  projectDir: GIT_TOP_LEVEL,
  note: 'Codex runs a project\'s hooks once you trust them: /hooks in Codex',
  entries: (exe) => [
    {
      event: 'SessionStart',
      handler: { type: 'command', command: orElsePrint(`${exe('auto-recall')} --format codex`, codexEnvelope('SessionStart', notInstalledMessage(commandProgram(exe('auto-recall'))))), timeout: 10 },
    },
    { event: 'PostToolUse', matcher: 'Bash', handler: { type: 'command', command: exe('memory-capture'), timeout: 10 } },
  ],
};
