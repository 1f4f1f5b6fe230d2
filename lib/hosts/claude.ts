import { asObject, type Json } from '../core/json.js';
import { failedExitCode, firstStr, shellCommand, str } from './fields.js';
import type { HookInput } from './payload.js';
import { commandProgram, sessionStartCommand, type HostHooks } from './settings.js';

// Claude Code (code.claude.com/docs/en/hooks); Codex and Gemini CLI reuse this reader.

const SHELL_TOOLS = new Set(['Bash']);

export function isClaudePayload(p: Json): boolean {
  return str(p, 'hook_event_name') !== null || str(p, 'tool_name') !== null || str(p, 'session_id') !== null;
}

export function readClaudePayload(p: Json): HookInput {
  return readClaudeShaped(p, 'claude', SHELL_TOOLS);
}

/** Shared by Codex and Gemini CLI, with the host's own shell tool names. */
export function readClaudeShaped(p: Json, host: HookInput['host'], shellTools: Set<string>): HookInput {
  const event = str(p, 'hook_event_name');
  const tool = str(p, 'tool_name');
  return {
    host,
    event,
    cwd: str(p, 'cwd'),
    sessionId: str(p, 'session_id'),
    prompt: str(p, 'prompt'),
    source: firstStr(p, 'source', 'trigger'),
    command: tool !== null && shellTools.has(tool) ? shellCommand(p.tool_input) : null,
    toolFailed: event?.endsWith('Failure') || responseFailed(p.tool_response),
    transcriptPath: str(p, 'transcript_path'),
    toolUseId: str(p, 'tool_use_id'),
  };
}

/** A non-zero exit code, an error, success:false or is_error. */
function responseFailed(response: unknown): boolean {
  const r = asObject(response);
  if (!r) return false;
  if (failedExitCode(r.exit_code ?? r.exitCode ?? r.returncode)) return true;
  if (r.success === false || r.is_error === true) return true;
  return (typeof r.error === 'string' && r.error.trim() !== '') || asObject(r.error) !== null;
}

/** The only keys (SPEC §4.4). */
export function claudeEnvelope(eventName: string, text: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: eventName, additionalContext: text } }) + '\n';
}

/** Claude Code's `if`, matched per command of a compound one. */
const CLAUDE_CAPTURE_IF = ['Bash(bd *)', 'Bash(*/bd *)'];

/** Synchronous: Claude Code cancels an async hook when `claude -p` ends right after the command. */
export const claudeHooks: HostHooks = {
  file: '.claude/settings.json',
  layout: 'nested',
  projectDir: '"$CLAUDE_PROJECT_DIR"',
  entries: (exe) => [
    {
      event: 'SessionStart',
      handler: {
        type: 'command',
        command: sessionStartCommand(exe, '--format claude', (text) => claudeEnvelope('SessionStart', text)),
        timeout: 10,
      },
    },
    ...CLAUDE_CAPTURE_IF.map((rule) => ({
      event: 'PostToolUse',
      matcher: 'Bash',
      handler: { type: 'command', if: rule, command: exe('memory-capture'), timeout: 10 },
    })),
  ],
  outdated: (handler) =>
    handler.async === true && commandProgram(String(handler.command)).endsWith('memory-capture')
      ? 'runs async: Claude Code cancels it when a session ends right after the command, and the capture is lost'
      : null,
};
