import { asObject, type Json } from '../core/json.js';
import { failedExitCode, firstStr, NO_CALL, str } from './fields.js';
import type { HookInput } from './payload.js';
import { GIT_TOP_LEVEL, sessionStartCommand, type HostHooks } from './settings.js';

// Cursor (cursor.com/docs/agent/hooks): camelCase events; sessionStart injects `additional_context`.

export function isCursorPayload(p: Json): boolean {
  if (str(p, 'conversation_id') !== null || Array.isArray(p.workspace_roots) || str(p, 'cursor_version') !== null) return true;
  return /^[a-z][A-Za-z]+$/.test(str(p, 'hook_event_name') ?? '');
}

export function readCursorPayload(p: Json): HookInput {
  const event = str(p, 'hook_event_name');
  const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots.filter((r): r is string => typeof r === 'string' && r !== '') : [];
  const shell = event === 'beforeShellExecution' || event === 'afterShellExecution';
  return {
    host: 'cursor',
    event,
    cwd: str(p, 'cwd') ?? roots[0] ?? null,
    sessionId: firstStr(p, 'session_id', 'conversation_id'),
    prompt: str(p, 'prompt'),
    source: str(p, 'source'),
    command: shell ? str(p, 'command') : null,
    toolFailed: failedExitCode(p.exit_code ?? p.exitCode) || asObject(p.error) !== null || (typeof p.error === 'string' && p.error !== ''),
    ...NO_CALL,
  };
}

export function cursorEnvelope(text: string): string {
  return JSON.stringify({ additional_context: text }) + '\n';
}

/** afterShellExecution is an observer: Cursor reads nothing back. */
export const cursorHooks: HostHooks = {
  file: '.cursor/hooks.json',
  layout: 'flat',
  base: { version: 1 },
  projectDir: GIT_TOP_LEVEL,
  entries: (exe) => [
    { event: 'sessionStart', handler: { command: sessionStartCommand(exe, '--format cursor', cursorEnvelope) } },
    { event: 'afterShellExecution', handler: { command: exe('memory-capture') } },
  ],
};
