import { sanitizeUntrusted } from '../core/sanitize.js';
import { KNOWLEDGE_TYPES } from './entry.js';

// A committed file anyone may edit: content sanitised again, every field checked (SPEC §4.4–§4.6).

export function shownContent(content: string): string {
  return sanitizeUntrusted(content);
}

export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max
    ? text
    : chars
        .slice(0, max - 1)
        .join('')
        .trimEnd() + '…';
}

export function hangingIndent(first: string, text: string, indent: string): string[] {
  const [head = '', ...rest] = text.split('\n').filter((l) => l.trim() !== '');
  return [first + head, ...rest.map((l) => indent + l)];
}

/** One of the seven types (SPEC §4.1), else `other`: a forged type could close the fence. */
export function shownType(type: string): string {
  return (KNOWLEDGE_TYPES as readonly string[]).includes(type) ? type : OTHER_TYPE;
}
const OTHER_TYPE = 'other';

const TAG = /^[\p{L}\p{N}][\p{L}\p{N}_.+#/-]{0,39}$/u;

/** A line, an escape sequence or a forged fence is left out. */
export function shownTags(tags: string[]): string[] {
  return tags.filter((t) => TAG.test(t));
}

export function shownKey(key: string): string {
  return sanitizeUntrusted(key, { singleLine: true });
}

/** Shell residue stored as a bead by old capture bugs is not. */
export function shownBead(bead: string): string | undefined {
  return /^[\w.:-]{1,64}$/.test(bead) ? bead : undefined;
}
