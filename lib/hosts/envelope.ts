import { claudeEnvelope } from './claude.js';
import { codexEnvelope } from './codex.js';
import { cursorEnvelope } from './cursor.js';
import { geminiEnvelope } from './gemini.js';
import type { HookInput } from './payload.js';

// What a hook prints for its host to add to the agent's context (SPEC §4.4). Text goes into a JSON
// string, so its newlines are real newlines once the host decodes it — never a literal `\n`.

export const ENVELOPE_FORMATS = ['claude', 'codex', 'gemini', 'cursor', 'text'] as const;
export type EnvelopeFormat = (typeof ENVELOPE_FORMATS)[number];

export function isEnvelopeFormat(value: string): value is EnvelopeFormat {
  return (ENVELOPE_FORMATS as readonly string[]).includes(value);
}

/** The format when --format is not given: the payload's host; OpenCode's plugin and unknown callers get text. */
export function envelopeFor(input: HookInput): EnvelopeFormat {
  return input.host === 'opencode' || input.host === 'unknown' ? 'text' : input.host;
}

/** The exact stdout for `text` as context of the event `eventName`; empty text prints nothing. */
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
