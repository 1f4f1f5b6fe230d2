import { asObject, type Json } from '../core/json.js';
import { readFileTail } from '../io/read.js';
import { str } from './fields.js';
import { claudeEnvelope, readClaudeShaped } from './claude.js';
import type { HookInput } from './payload.js';
import { GIT_TOP_LEVEL, sessionStartCommand, type HostHooks } from './settings.js';

// Codex CLI (developers.openai.com/codex/hooks): Claude's layout and payloads; output schemas forbid unknown keys.

const SHELL_TOOLS = new Set(['Bash', 'shell', 'local_shell', 'exec_command']);

export function isCodexPayload(p: Json): boolean {
  return str(p, 'turn_id') !== null;
}

export function readCodexPayload(p: Json): HookInput {
  return readClaudeShaped(p, 'codex', SHELL_TOOLS);
}

export const codexEnvelope = claudeEnvelope;

const TRANSCRIPT_TAIL = 8 * 1024 * 1024;

/** From the session's transcript (`tool_response` is the output alone); null when it cannot tell. */
export function transcriptExitCode(transcriptPath: string, callId: string): number | null {
  let tail: Buffer | undefined;
  try {
    tail = readFileTail(transcriptPath, TRANSCRIPT_TAIL);
  } catch {
    return null;
  }
  if (tail === undefined) return null;
  const needle = JSON.stringify(callId);
  const lines = tail.toString('utf8').split('\n');
  const first = tail.length < TRANSCRIPT_TAIL ? 0 : 1; // a tail cut mid-line starts with a piece of one
  for (let i = lines.length - 1; i >= first; i--) {
    if (!lines[i].includes(needle) || !lines[i].includes('"item_completed"')) continue;
    try {
      const item = asObject(asObject(asObject(JSON.parse(lines[i]))?.payload)?.item);
      if (item?.id === callId && typeof item.exit_code === 'number') return item.exit_code;
    } catch {
      // a line being written: not this one
    }
  }
  return null;
}

/** SPEC §4.2: a failed run captures nothing. */
export function codexCallFailed(input: HookInput): boolean {
  if (input.host !== 'codex' || input.transcriptPath === null || input.toolUseId === null) return false;
  const code = transcriptExitCode(input.transcriptPath, input.toolUseId);
  return code !== null && code !== 0;
}

/** Synchronous: `async` handlers are recent in Codex; memory-capture exits at once on a payload without a capture. */
export const codexHooks: HostHooks = {
  file: '.codex/hooks.json',
  layout: 'nested',
  projectDir: GIT_TOP_LEVEL,
  entries: (exe) => [
    {
      event: 'SessionStart',
      handler: {
        type: 'command',
        command: sessionStartCommand(exe, '--format codex', (text) => codexEnvelope('SessionStart', text)),
        timeout: 10,
      },
    },
    {
      event: 'PostToolUse',
      matcher: 'Bash',
      handler: { type: 'command', command: exe('memory-capture'), timeout: 10 },
    },
  ],
};
