import { asObject, type Json } from '../core/json.js';
import { str } from './fields.js';
import { claudeEnvelope, readClaudeShaped } from './claude.js';
import type { HookInput } from './payload.js';
import { sessionStartCommand, type HostHooks } from './settings.js';

// Gemini CLI (gemini-cli docs/hooks): Claude's shape with a timestamp and its own names; stdout must be JSON only.

const EVENTS = new Set([
  'BeforeAgent',
  'AfterAgent',
  'BeforeTool',
  'AfterTool',
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
  'PreCompress',
]);
const SHELL_TOOLS = new Set(['run_shell_command']);

export function isGeminiPayload(p: Json): boolean {
  const event = str(p, 'hook_event_name');
  if (event !== null && EVENTS.has(event)) return true;
  if (str(p, 'tool_name') === 'run_shell_command') return true;
  return event !== null && str(p, 'timestamp') !== null; // Claude and Codex send no timestamp
}

export function readGeminiPayload(p: Json): HookInput {
  const input = readClaudeShaped(p, 'gemini', SHELL_TOOLS);
  return { ...input, toolFailed: input.toolFailed || shellReportedFailure(p.tool_response) };
}

/** As an `Exit Code: N` line of its llmContent. */
function shellReportedFailure(response: unknown): boolean {
  const text = str(asObject(response), 'llmContent');
  const m = text === null ? null : /^Exit Code: (-?\d+)/m.exec(text);
  return m !== null && Number(m[1]) !== 0;
}

export const geminiEnvelope = claudeEnvelope;

/** Gemini CLI waits for every hook (no async); timeouts in milliseconds. */
export const geminiHooks: HostHooks = {
  file: '.gemini/settings.json',
  layout: 'nested',
  projectDir: '"$GEMINI_PROJECT_DIR"',
  note: 'Gemini CLI runs hooks when its hooks system is enabled: /settings → Advanced → Enable Hooks System',
  entries: (exe) => [
    {
      event: 'SessionStart',
      handler: {
        name: 'cairn-auto-recall',
        type: 'command',
        command: sessionStartCommand(exe, '--format gemini', (text) => geminiEnvelope('SessionStart', text)),
        timeout: 10000,
      },
    },
    {
      event: 'AfterTool',
      matcher: 'run_shell_command',
      handler: { name: 'cairn-memory-capture', type: 'command', command: exe('memory-capture'), timeout: 10000 },
    },
  ],
};
