import { claudeEnvelope } from './claude.js';
import { codexEnvelope } from './codex.js';
import { cursorEnvelope } from './cursor.js';
import { geminiEnvelope } from './gemini.js';
import type { HookInput } from './payload.js';

// Context for the agent (SPEC §4.4), in a JSON string: newlines are real once the host decodes it, never a literal `\n`.

export const ENVELOPE_FORMATS = ['claude', 'codex', 'gemini', 'cursor', 'text'] as const;
export type EnvelopeFormat = (typeof ENVELOPE_FORMATS)[number];

export function isEnvelopeFormat(value: string): value is EnvelopeFormat {
  return (ENVELOPE_FORMATS as readonly string[]).includes(value);
}

/** The payload's host; OpenCode's plugin and unknown callers get text. */
export function envelopeFor(input: HookInput): EnvelopeFormat {
  return input.host === 'opencode' || input.host === 'unknown' ? 'text' : input.host;
}

/** Empty text prints nothing. */
export function wrapContext(format: EnvelopeFormat, eventName: string, text: string): string {
  if (text.trim() === '') return '';
  switch (format) {
    case 'claude':
      return claudeEnvelope(eventName, text);
    case 'codex':
      return codexEnvelope(eventName, text);
    case 'gemini':
      return geminiEnvelope(eventName, text);
    case 'cursor':
      return cursorEnvelope(text);
    case 'text':
      return text.endsWith('\n') ? text : text + '\n';
  }
}
