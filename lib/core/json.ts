import { CairnError } from './errors.js';

// A value that is not a plain object reads as absent.

export type Json = Record<string, unknown>;

export function asObject(value: unknown): Json | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
}

/** Never the text, which may be a secret (SPEC §4.6). */
export function jsonErrorPlace(text: string, err: unknown): string {
  const at = jsonErrorOffset(text, err);
  if (at >= text.length) return 'it ends before its JSON does';
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${at - lineStart + 1}`;
}

function jsonErrorOffset(text: string, err: unknown): number {
  const message = err instanceof Error ? err.message : '';
  const position = / at position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  if (/Unexpected end of JSON input/.test(message)) return text.length;
  // V8 omits an unexpected token's position: bisect for the longest viable prefix
  let viable = 0;
  let broken = text.length;
  while (broken - viable > 1) {
    const mid = (viable + broken) >>> 1;
    if (couldBecomeJson(text.slice(0, mid))) viable = mid;
    else broken = mid;
  }
  return viable;
}

function couldBecomeJson(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    if (/Unexpected end of JSON input/.test(message)) return true;
    const position = / at position (\d+)/.exec(message);
    return position !== null && Number(position[1]) >= prefix.length;
  }
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CairnError('input', `${what} is not valid JSON (${jsonErrorPlace(text, err)})`);
  }
}
