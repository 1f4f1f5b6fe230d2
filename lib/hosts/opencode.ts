import { asObject, type Json } from '../core/json.js';
import { failedExitCode, firstStr, NO_CALL, shellCommand, str } from './fields.js';
import type { HookInput } from './payload.js';

// No command hooks: the plugin (hooks/opencode/cairn.js) pipes its own events to the executables; context as text.

export function isOpenCodePayload(p: Json): boolean {
  return str(p, 'sessionID') !== null || /^(tool|session)\./.test(str(p, 'event') ?? '');
}

export function readOpenCodePayload(p: Json): HookInput {
  const metadata = asObject(p.metadata);
  return {
    host: 'opencode',
    event: str(p, 'event'),
    cwd: firstStr(p, 'directory', 'cwd'),
    sessionId: str(p, 'sessionID'),
    prompt: str(p, 'prompt'),
    source: null,
    command: str(p, 'tool') === 'bash' ? shellCommand(p.args) : null,
    toolFailed: failedExitCode(metadata?.exit ?? metadata?.exitCode),
    ...NO_CALL,
  };
}
