import type { Json } from '../core/json.js';
import { str } from './fields.js';
import { claudeEnvelope, readClaudeShaped } from './claude.js';
import type { HookInput } from './payload.js';

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
