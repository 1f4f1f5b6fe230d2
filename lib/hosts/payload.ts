import { asObject } from '../core/json.js';
import { NO_CALL } from './fields.js';
import { isClaudePayload, readClaudePayload } from './claude.js';
import { isCodexPayload, readCodexPayload } from './codex.js';
import { isCursorPayload, readCursorPayload } from './cursor.js';
import { isGeminiPayload, readGeminiPayload } from './gemini.js';
import { isOpenCodePayload, readOpenCodePayload } from './opencode.js';

// A hook payload from any host (SPEC §4.2, §4.4, §7); the most specific shapes first (Codex and Gemini extend Claude's).

export type Host = 'claude' | 'codex' | 'gemini' | 'cursor' | 'opencode' | 'unknown';

export interface HookInput {
  host: Host;
  event: string | null;
  cwd: string | null;
  sessionId: string | null;
  prompt: string | null;
  source: string | null;
  /** Of a shell-tool event, else null. */
  command: string | null;
  toolFailed: boolean;
  /** Codex records a command's exit code there. */
  transcriptPath: string | null;
  toolUseId: string | null;
}

const READERS: [(p: Record<string, unknown>) => boolean, (p: Record<string, unknown>) => HookInput][] = [
  [isCursorPayload, readCursorPayload],
  [isOpenCodePayload, readOpenCodePayload],
  [isGeminiPayload, readGeminiPayload],
  [isCodexPayload, readCodexPayload],
  [isClaudePayload, readClaudePayload],
];

/** Never throws; an unknown shape reads as nulls. */
export function readHookInput(json: unknown): HookInput {
  let value = json;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      value = null;
    }
  }
  const p = asObject(value);
  if (p) for (const [matches, read] of READERS) if (matches(p)) return read(p);
  const nothing = { event: null, cwd: null, sessionId: null, prompt: null, source: null, command: null, toolFailed: false };
  return { host: 'unknown', ...nothing, ...NO_CALL };
}
