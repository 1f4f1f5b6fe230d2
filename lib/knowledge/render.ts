import { sanitizeUntrusted } from '../core/sanitize.js';
import { KNOWLEDGE_TYPES } from './entry.js';

// How an entry is shown (SPEC §4.4–§4.6): the log is a committed file anyone may edit, so content is sanitised
// again and indented under its first line, and every printed field is checked or sanitised.

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

/** The first line as given, the others indented; blank lines dropped. */
export function hangingIndent(first: string, text: string, indent: string): string[] {
  const [head = '', ...rest] = text.split('\n').filter((l) => l.trim() !== '');
  return [first + head, ...rest.map((l) => indent + l)];
}

/**
 * The label an entry is shown under: its type when one of the seven (SPEC §4.1), else `other` — a forged
 * type could close the fence.
 */
export function shownType(type: string): string {
  return (KNOWLEDGE_TYPES as readonly string[]).includes(type) ? type : OTHER_TYPE;
}
const OTHER_TYPE = 'other';

const TAG = /^[\p{L}\p{N}][\p{L}\p{N}_.+#/-]{0,39}$/u;

/** The tags worth showing; anything else (a line, an escape sequence, a forged fence) is left out. */
export function shownTags(tags: string[]): string[] {
  return tags.filter((t) => TAG.test(t));
}

export function shownKey(key: string): string {
  return sanitizeUntrusted(key, { singleLine: true });
}

/** A bead id worth showing; shell residue stored as a bead by old capture bugs is not. */
export function shownBead(bead: string): string | undefined {
  return /^[\w.:-]{1,64}$/.test(bead) ? bead : undefined;
}
